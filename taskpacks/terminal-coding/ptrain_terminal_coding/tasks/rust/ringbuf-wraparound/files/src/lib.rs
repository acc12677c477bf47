//! A fixed-capacity ring buffer.

/// Holds at most `capacity` elements; pushing onto a full buffer evicts the oldest.
pub struct RingBuffer<T> {
    slots: Vec<Option<T>>,
    head: usize, // index of the oldest element
    len: usize,
}

impl<T> RingBuffer<T> {
    /// A buffer for `capacity` elements. Panics if `capacity` is 0.
    pub fn new(capacity: usize) -> Self {
        let mut slots = Vec::with_capacity(capacity);
        for _ in 0..capacity {
            slots.push(None);
        }
        RingBuffer { slots, head: 0, len: 0 }
    }

    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn is_full(&self) -> bool {
        self.len == self.capacity()
    }

    /// Appends `value` at the back; when full, evicts and returns the oldest element.
    pub fn push(&mut self, value: T) -> Option<T> {
        let tail = (self.head + self.len) % self.capacity();
        if self.is_full() {
            let old = self.slots[tail - 1].replace(value);
            self.len += 1;
            return old;
        }
        self.slots[tail] = Some(value);
        self.len += 1;
        None
    }

    /// Removes and returns the oldest element.
    pub fn pop_front(&mut self) -> Option<T> {
        if self.is_empty() {
            return None;
        }
        let value = self.slots[self.head].take();
        self.head += 1;
        self.len -= 1;
        value
    }

    /// The i-th oldest element.
    pub fn get(&self, i: usize) -> Option<&T> {
        if i >= self.len {
            return None;
        }
        self.slots[i].as_ref()
    }

    /// Oldest to newest.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.slots.iter().filter_map(|s| s.as_ref())
    }
}

impl<T: Clone> RingBuffer<T> {
    pub fn to_vec(&self) -> Vec<T> {
        self.iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_and_pop_without_wrapping() {
        let mut b = RingBuffer::new(3);
        assert_eq!(b.push(1), None);
        assert_eq!(b.push(2), None);
        assert_eq!(b.pop_front(), Some(1));
        assert_eq!(b.len(), 1);
    }
}

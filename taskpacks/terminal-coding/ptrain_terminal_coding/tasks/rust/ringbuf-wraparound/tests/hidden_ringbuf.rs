use ringbuf::RingBuffer;
use std::collections::VecDeque;

#[test]
fn full_buffer_evicts_the_oldest() {
    let mut b = RingBuffer::new(3);
    for i in 1..=3 {
        assert_eq!(b.push(i), None);
    }
    assert!(b.is_full());
    assert_eq!(b.push(4), Some(1));
    assert_eq!(b.push(5), Some(2));
    assert_eq!(b.to_vec(), vec![3, 4, 5]);
    assert_eq!(b.len(), 3);
    assert_eq!(b.get(0), Some(&3));
    assert_eq!(b.get(2), Some(&5));
    assert_eq!(b.get(3), None);
}

#[test]
fn iteration_is_oldest_first_after_wrapping() {
    let mut b = RingBuffer::new(4);
    for i in 0..10 {
        b.push(i);
    }
    assert_eq!(b.iter().copied().collect::<Vec<_>>(), vec![6, 7, 8, 9]);
    assert_eq!(b.pop_front(), Some(6));
    b.push(10);
    b.push(11);
    assert_eq!(b.to_vec(), vec![8, 9, 10, 11]);
}

#[test]
fn matches_a_vecdeque_model() {
    let mut seed: u64 = 12345;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for cap in [1usize, 2, 3, 7] {
        let mut b = RingBuffer::new(cap);
        let mut model: VecDeque<u64> = VecDeque::new();
        for _ in 0..5000 {
            let r = next();
            if r % 3 == 0 {
                assert_eq!(b.pop_front(), model.pop_front());
            } else {
                let evicted = if model.len() == cap { model.pop_front() } else { None };
                model.push_back(r);
                assert_eq!(b.push(r), evicted);
            }
            assert_eq!(b.len(), model.len());
            assert_eq!(b.is_empty(), model.is_empty());
            assert_eq!(b.is_full(), model.len() == cap);
            assert_eq!(b.iter().copied().collect::<Vec<_>>(), model.iter().copied().collect::<Vec<_>>());
            let i = (r as usize) % (cap + 1);
            assert_eq!(b.get(i), model.get(i));
        }
    }
}

#[test]
fn non_copy_values() {
    let mut b: RingBuffer<String> = RingBuffer::new(2);
    b.push("a".to_string());
    b.push("b".to_string());
    assert_eq!(b.push("c".to_string()), Some("a".to_string()));
    assert_eq!(b.to_vec(), vec!["b".to_string(), "c".to_string()]);
}

#[test]
#[should_panic(expected = "capacity")]
fn zero_capacity_panics() {
    let _ = RingBuffer::<u8>::new(0);
}

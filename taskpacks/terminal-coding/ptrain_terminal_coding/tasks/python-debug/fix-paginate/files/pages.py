"""Split a list of items into numbered pages, the way a web listing does."""


def page_count(total, per_page):
    """Number of pages needed for `total` items, `per_page` per page (at least 1 page)."""
    if per_page < 1:
        raise ValueError("per_page must be at least 1")
    return max(1, total // per_page)


def paginate(items, page, per_page=10):
    """The items on page `page` (pages are numbered from 1).

    Raises ValueError for a page number below 1 or past the last page."""
    pages = page_count(len(items), per_page)
    if page < 1 or page > pages:
        raise ValueError(f"page {page} out of range 1..{pages}")
    start = page * per_page
    return items[start:start + per_page]

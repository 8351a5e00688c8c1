"""``make tune``: every comparison's arms tuned alike (:mod:`book_build.tuning_search`)."""

from book_build.tuning_search import main

if __name__ == "__main__":
    raise SystemExit(main())

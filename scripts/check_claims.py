"""``make claims``: the chapters that train, under seeds 0-7 (:mod:`book_build.claims_run`)."""

from book_build.claims_run import main

if __name__ == "__main__":
    raise SystemExit(main())

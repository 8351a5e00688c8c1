"""``make book CPU=avx2``: run a command with another CPU's numerics (:mod:`book_build.other_cpu`)."""

from book_build.other_cpu import main

if __name__ == "__main__":
    raise SystemExit(main())

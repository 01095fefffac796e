from kg.cli import main

if __name__ == "__main__":  # not when a spawned process imports this as `__mp_main__`
    raise SystemExit(main())

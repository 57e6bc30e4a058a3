"""The reviewer's demo: see README.md beside this file and __main__.py."""

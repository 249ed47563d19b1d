"""The subcommands of `osmeter`, one module each.

Every module defines `register(subparsers)`, which adds its parser with
`set_defaults(func=handle)`, and `handle(args) -> exit status`.  osmeter/cli.py builds
the parser from them and dispatches; what several commands share (UsageError, fail, the
store, finding a run) is in common.py.  No command imports osmeter.cli, and no command
imports another (replicate runs `osmeter run` through args.main).
"""

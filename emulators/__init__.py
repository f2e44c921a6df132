"""Stand-ins for outside services, for tests, demos and benches; the product imports none of them.

See emulators/README.md. Nothing under apps/, config/ or workers/ may import this package
(`make lint` checks it): the product runs the same without it.
"""

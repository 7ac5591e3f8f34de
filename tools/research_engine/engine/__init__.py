"""The headless engine: the model interface (`engine.models`), record and replay (`engine.cassette`).

Import the submodules you need; nothing heavy is imported here.
"""

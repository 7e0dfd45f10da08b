"""Neural backends' plumbing: device probe, weights resolver, shared model cache, tool runner, turn control.

Nothing here imports torch, diffusers or transformers at import time: `device.probe_device` and the loaders import
them when a neural tool first needs them, so `import costa` and the app's start stay light.
"""

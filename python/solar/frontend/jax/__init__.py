"""The JAX front end (docs/jax.md): capture a JAX function or Flax module as a jaxpr over
abstract values (capture.py), lower every primitive onto the same IR standard library as the
PyTorch front end (lower.py walks the jaxpr, rules.py holds one rule per primitive), and
validate the emitted program against the jitted function on the CPU (validate.py)."""

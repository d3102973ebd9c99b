# Type: stack on line 7 stacks an int32 and an int64 tensor (no implicit promotion).
from solar.ir import kernel, Tensor, Dim

DIMS = {"N": 8}

def model(a: Tensor("N", role="input", dtype="int32"), b: Tensor("N", role="input", dtype="int64")):
    return stack([a, b], dim="L")

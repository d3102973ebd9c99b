# split into chunks of 1 along 2^40 elements built 2^40 parts (memory until killed).
DIMS = {"N": 1099511627776}

def model(x: Tensor("N", role="input", dtype="int8")):
    return split(x, dim="N", sizes=1)[0]

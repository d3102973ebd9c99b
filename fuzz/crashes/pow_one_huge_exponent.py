# 1 ** 10^18 looped 10^18 multiplications (a hang); now by repeated squaring.
DIMS = {"N": 4}

def model(x: Tensor("N", role="input")):
    n = 1 ** 1000000000000000000
    return x

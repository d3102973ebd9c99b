# concat of fp16 and fp32: the output took fp16 and the executor's copy of the fp32 part
# overran it (heap corruption, SIGABRT in both backends). Now a type error at trace time.
DIMS = {"N": 1024}

def model(x: Tensor("N", role="input", dtype="fp16"), y: Tensor("N", role="input", dtype="fp32")):
    return concat([x, y], dim="N")

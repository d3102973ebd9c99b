# DeepSeek-V3 Multi-head Latent Attention (MLA), absorbed form, one layer's attention core at
# prefill: the score chain q_nope · W_UK · c_KV and the value chain P · c_KV · W_UV · W_O
# (the paper's Figure 4b 4-tensor chain), both computed left to right as written.
#
# Dims from DeepSeek-V3's config.json (deepseek-ai/DeepSeek-V3): num_attention_heads H=128,
# qk_nope_head_dim N=128, kv_lora_rank C=512, v_head_dim V=128, hidden_size D=7168; B=1 and
# S=T=4096 tokens. The decoupled RoPE part of the keys (qk_rope_head_dim 64), the query
# projection and masking are left out: they are not part of the chains. Tensors are fp32 here
# (DeepSeek-V3 runs these products in fp8/bf16): MACs and the chains' FLOPs do not depend on
# the dtype, bytes halve in bf16 (add dtype="bf16" to every annotation and allocation).
#
# `solar chains` finds two chains here. The value chain, in units of 2^30 MACs
# (B·H·S·T·C = 128·4096·4096·512 = 1024·2^30):
#   left to right ((P·c_KV)·W_UV)·W_O: B·H·S·T·C + B·H·S·C·V + B·S·H·V·D
#                                     = 1024 + 32 + 448 = 1504
#   best (P·(c_KV·W_UV))·W_O:         B·T·H·C·V + B·H·S·T·V + B·S·H·V·D
#                                     = 32 + 256 + 448 = 736      -> 1504 / 736 = 2.04x
#   worst P·(c_KV·(W_UV·W_O)):        H·C·V·D + B·T·H·C·D + B·H·S·T·D
#                                     = 56 + 1792 + 14336 = 16184 -> range 16184 / 736 = 22.0x
# The score chain: (q_nope·W_UK)·c_KV = B·S·H·N·C + B·H·S·T·C = 32 + 1024 = 1056 against
# q_nope·(W_UK·c_KV) = B·T·H·N·C + B·H·S·T·N = 32 + 256 = 288: 3.67x fewer.
from solar.ir import kernel, Tensor, Dim

@kernel
def absorb_q(Q: Tensor("B,S,H,N"), W: Tensor("H,N,C")) -> Tensor("B,S,H,C"):
    Y = Tensor(B=Q.shape[0], S=Q.shape[1], H=Q.shape[2], C=W.shape[2], fill=0)
    for b in Dim("B", parallel=True):
        for s in Dim("S", parallel=True):
            for h in Dim("H", parallel=True):
                for c in Dim("C", parallel=True):
                    for n in Dim("N"):
                        Y[b, s, h, c] += Q[b, s, h, n] * W[h, n, c]
    return Y

@kernel
def latent_scores(Q: Tensor("B,S,H,C"), K: Tensor("B,T,C")) -> Tensor("B,H,S,T"):
    A = Tensor(B=Q.shape[0], H=Q.shape[2], S=Q.shape[1], T=K.shape[1], fill=0)
    for b in Dim("B", parallel=True):
        for h in Dim("H", parallel=True):
            for s in Dim("S", parallel=True):
                for t in Dim("T", parallel=True):
                    for c in Dim("C"):
                        A[b, h, s, t] += Q[b, s, h, c] * K[b, t, c]
    return A

@kernel
def softmax(X: Tensor("B,H,S,T"), scale: float) -> Tensor("B,H,S,T"):
    M = Tensor(B=X.shape[0], H=X.shape[1], S=X.shape[2], fill=-inf)
    Z = Tensor(B=X.shape[0], H=X.shape[1], S=X.shape[2], fill=0)
    Y = Tensor(B=X.shape[0], H=X.shape[1], S=X.shape[2], T=X.shape[3])
    for b in Dim("B", parallel=True):
        for h in Dim("H", parallel=True):
            for s in Dim("S", parallel=True):
                for t in Dim("T"):
                    M[b, h, s] = max(M[b, h, s], X[b, h, s, t])
    for b in Dim("B", parallel=True):
        for h in Dim("H", parallel=True):
            for s in Dim("S", parallel=True):
                for t in Dim("T"):
                    Z[b, h, s] += exp(scale * (X[b, h, s, t] - M[b, h, s]))
    for b in Dim("B", parallel=True):
        for h in Dim("H", parallel=True):
            for s in Dim("S", parallel=True):
                for t in Dim("T"):
                    Y[b, h, s, t] = exp(scale * (X[b, h, s, t] - M[b, h, s])) / Z[b, h, s]
    return Y

@kernel
def latent_attend(P: Tensor("B,H,S,T"), K: Tensor("B,T,C")) -> Tensor("B,H,S,C"):
    O = Tensor(B=P.shape[0], H=P.shape[1], S=P.shape[2], C=K.shape[2], fill=0)
    for b in Dim("B", parallel=True):
        for h in Dim("H", parallel=True):
            for s in Dim("S", parallel=True):
                for c in Dim("C", parallel=True):
                    for t in Dim("T"):
                        O[b, h, s, c] += P[b, h, s, t] * K[b, t, c]
    return O

@kernel
def up_v(O: Tensor("B,H,S,C"), W: Tensor("H,C,V")) -> Tensor("B,H,S,V"):
    Y = Tensor(B=O.shape[0], H=O.shape[1], S=O.shape[2], V=W.shape[2], fill=0)
    for b in Dim("B", parallel=True):
        for h in Dim("H", parallel=True):
            for s in Dim("S", parallel=True):
                for v in Dim("V", parallel=True):
                    for c in Dim("C"):
                        Y[b, h, s, v] += O[b, h, s, c] * W[h, c, v]
    return Y

@kernel
def out_proj(Y: Tensor("B,H,S,V"), W: Tensor("H,V,D")) -> Tensor("B,S,D"):
    Z = Tensor(B=Y.shape[0], S=Y.shape[2], D=W.shape[2], fill=0)
    for b in Dim("B", parallel=True):
        for s in Dim("S", parallel=True):
            for d in Dim("D", parallel=True):
                for h in Dim("H"):
                    for v in Dim("V"):
                        Z[b, s, d] += Y[b, h, s, v] * W[h, v, d]
    return Z

DIMS = {"B": 1, "S": 4096, "T": 4096, "H": 128, "N": 128, "C": 512, "V": 128, "D": 7168}

def model(q_nope: Tensor("B,S,H,N", role="input"),
          c_kv: Tensor("B,T,C", role="input"),
          w_uk: Tensor("H,N,C", role="weight"),
          w_uv: Tensor("H,C,V", role="weight"),
          w_o: Tensor("H,V,D", role="weight"),
          scale: float = 0.0722):
    p = softmax(latent_scores(absorb_q(q_nope, w_uk), c_kv), scale)
    return out_proj(up_v(latent_attend(p, c_kv), w_uv), w_o)

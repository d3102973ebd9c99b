# DeepSeek-V3 Multi-head Latent Attention (MLA), absorbed form, one layer's attention core at
# prefill, written with torch.einsum: the PyTorch twin of examples/ir/mla_absorbed_attention.py
# (same dims, same products, same order). The score chain q_nope · W_UK · c_KV and the value
# chain P · c_KV · W_UV · W_O (the paper's Figure 4b 4-tensor chain) are computed left to
# right as written.
#
# Dims from DeepSeek-V3's config.json (deepseek-ai/DeepSeek-V3): num_attention_heads H=128,
# qk_nope_head_dim N=128, kv_lora_rank C=512, v_head_dim V=128, hidden_size D=7168; B=1 and
# S=T=4096 tokens. The decoupled RoPE part of the keys, the query projection and masking are
# left out, as in the IR example.
#
# `solar chains examples/pytorch/mla_einsum.py` finds the same two chains as the IR example:
# each torch.einsum is one contraction kernel reading its operands in place (no permute or
# copy between consecutive contractions; docs/sol-modes.md, "Contraction forms"). The value
# chain in units of 2^30 MACs: left to right 1024 + 32 + 448 = 1504, best (P·(c_KV·W_UV))·W_O
# 32 + 256 + 448 = 736 (2.04x), worst 16184 (range 22.0x), over 5 orders.
import torch
import torch.nn as nn

batch = 1
seq = 4096  # S = T
heads = 128
nope = 128
latent = 512
value = 128
hidden = 7168


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.w_uk = nn.Parameter(torch.randn(heads, nope, latent) / nope**0.5)
        self.w_uv = nn.Parameter(torch.randn(heads, latent, value) / latent**0.5)
        self.w_o = nn.Parameter(torch.randn(heads, value, hidden) / (heads * value) ** 0.5)

    def forward(self, q_nope, c_kv):
        q = torch.einsum("bshn,hnc->bshc", q_nope, self.w_uk)
        scores = torch.einsum("bshc,btc->bhst", q, c_kv)
        p = torch.softmax(scores * 0.0722, dim=-1)
        o = torch.einsum("bhst,btc->bhsc", p, c_kv)
        y = torch.einsum("bhsc,hcv->bhsv", o, self.w_uv)
        return torch.einsum("bhsv,hvd->bsd", y, self.w_o)


def get_inputs():
    return [torch.randn(batch, seq, heads, nope), torch.randn(batch, seq, latent)]


def get_init_inputs():
    return []

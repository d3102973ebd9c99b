# Transformer decoder block built from nn.MultiheadAttention (batch_first): causal self-attention
# with a boolean attention mask, cross-attention over encoder memory, ReLU feed-forward, post-norms.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
tgt_len = 256
src_len = 512
d_model = 1024
nhead = 16
dim_feedforward = 4096


class Model(nn.Module):
    def __init__(self, d_model, nhead, dim_feedforward):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, nhead, dropout=0.1, batch_first=True)
        self.cross_attn = nn.MultiheadAttention(d_model, nhead, dropout=0.1, batch_first=True)
        self.ff1 = nn.Linear(d_model, dim_feedforward)
        self.ff2 = nn.Linear(dim_feedforward, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)
        self.drop = nn.Dropout(0.1)
        causal = torch.triu(torch.ones(tgt_len, tgt_len, dtype=torch.bool), diagonal=1)
        self.register_buffer("causal_mask", causal)

    def forward(self, tgt, memory):
        sa, _ = self.self_attn(tgt, tgt, tgt, attn_mask=self.causal_mask, need_weights=False)
        x = self.norm1(tgt + self.drop(sa))
        ca, _ = self.cross_attn(x, memory, memory, need_weights=False)
        x = self.norm2(x + self.drop(ca))
        ff = self.ff2(self.drop(F.relu(self.ff1(x))))
        return self.norm3(x + self.drop(ff))


def get_inputs():
    return [torch.randn(batch_size, tgt_len, d_model), torch.randn(batch_size, src_len, d_model)]


def get_init_inputs():
    return [d_model, nhead, dim_feedforward]

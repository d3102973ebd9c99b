# Pre-norm transformer feed-forward: LayerNorm, Linear up, GELU, Linear down, dropout, residual add.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
seq_len = 1024
hidden_size = 1024
ffn_size = 4096
dropout_p = 0.1


class Model(nn.Module):
    def __init__(self, hidden_size, ffn_size, dropout_p):
        super().__init__()
        self.norm = nn.LayerNorm(hidden_size)
        self.up = nn.Linear(hidden_size, ffn_size)
        self.down = nn.Linear(ffn_size, hidden_size)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, x):
        h = self.down(F.gelu(self.up(self.norm(x))))
        return x + self.dropout(h)


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden_size)]


def get_init_inputs():
    return [hidden_size, ffn_size, dropout_p]

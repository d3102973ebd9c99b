# One nn.TransformerEncoderLayer (batch_first, GELU, pre-norm) with a boolean key-padding mask.
import torch
import torch.nn as nn

batch_size = 32
seq_len = 512
d_model = 1024
nhead = 16
dim_feedforward = 4096
dropout_p = 0.1


class Model(nn.Module):
    def __init__(self, d_model, nhead, dim_feedforward, dropout_p):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(
            d_model,
            nhead,
            dim_feedforward=dim_feedforward,
            dropout=dropout_p,
            activation="gelu",
            batch_first=True,
            norm_first=True,
        )

    def forward(self, src, src_key_padding_mask):
        return self.layer(src, src_key_padding_mask=src_key_padding_mask)


def get_inputs():
    src = torch.randn(batch_size, seq_len, d_model)
    mask = torch.zeros(batch_size, seq_len, dtype=torch.bool)
    mask[:, seq_len - seq_len // 8:] = True
    return [src, mask]


def get_init_inputs():
    return [d_model, nhead, dim_feedforward, dropout_p]

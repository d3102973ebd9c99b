# Text classifier: token + learned position embeddings (integer token ids), two hand-written
# bidirectional attention blocks with a padding mask, masked mean pooling, Linear classifier.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
seq_len = 512
vocab_size = 30522
hidden_size = 768
num_heads = 12
num_layers = 2
num_classes = 4


class Block(nn.Module):
    def __init__(self, hidden_size, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.q = nn.Linear(hidden_size, hidden_size)
        self.k = nn.Linear(hidden_size, hidden_size)
        self.v = nn.Linear(hidden_size, hidden_size)
        self.o = nn.Linear(hidden_size, hidden_size)
        self.ln1 = nn.LayerNorm(hidden_size)
        self.ff1 = nn.Linear(hidden_size, 4 * hidden_size)
        self.ff2 = nn.Linear(4 * hidden_size, hidden_size)
        self.ln2 = nn.LayerNorm(hidden_size)
        self.drop = nn.Dropout(0.1)

    def forward(self, x, pad_mask):
        b, t, c = x.shape
        hd = c // self.num_heads
        q = self.q(x).view(b, t, self.num_heads, hd).transpose(1, 2)
        k = self.k(x).view(b, t, self.num_heads, hd).transpose(1, 2)
        v = self.v(x).view(b, t, self.num_heads, hd).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-1, -2)) / (hd ** 0.5)
        scores = scores.masked_fill(~pad_mask[:, None, None, :], -1e9)
        probs = self.drop(F.softmax(scores, dim=-1))
        ctx = torch.matmul(probs, v).transpose(1, 2).reshape(b, t, c)
        x = self.ln1(x + self.drop(self.o(ctx)))
        x = self.ln2(x + self.drop(self.ff2(F.gelu(self.ff1(x)))))
        return x


class Model(nn.Module):
    def __init__(self, vocab_size, hidden_size, num_heads, num_layers, num_classes):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, hidden_size)
        self.pos = nn.Embedding(seq_len, hidden_size)
        self.ln = nn.LayerNorm(hidden_size)
        self.blocks = nn.ModuleList([Block(hidden_size, num_heads) for _ in range(num_layers)])
        self.cls = nn.Linear(hidden_size, num_classes)

    def forward(self, tokens, attention_mask):
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.ln(self.tok(tokens) + self.pos(positions)[None])
        for block in self.blocks:
            x = block(x, attention_mask)
        m = attention_mask.unsqueeze(-1).to(x.dtype)
        pooled = (x * m).sum(dim=1) / m.sum(dim=1).clamp(min=1.0)
        return self.cls(pooled)


def get_inputs():
    tokens = torch.randint(0, vocab_size, (batch_size, seq_len))
    attention_mask = torch.rand(batch_size, seq_len) < 0.9
    return [tokens, attention_mask]


def get_init_inputs():
    return [vocab_size, hidden_size, num_heads, num_layers, num_classes]

# ViT front end + one encoder block: conv patch embedding (stride=patch), cls token, position
# embedding, pre-LN multi-head attention (no mask), GELU MLP, final LayerNorm and class head.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
image_size = 224
patch_size = 16
in_channels = 3
embed_dim = 768
num_heads = 12
mlp_ratio = 4
num_classes = 1000


class Model(nn.Module):
    def __init__(self, image_size, patch_size, in_channels, embed_dim, num_heads, mlp_ratio, num_classes):
        super().__init__()
        num_patches = (image_size // patch_size) ** 2
        self.num_heads = num_heads
        self.patch_embed = nn.Conv2d(in_channels, embed_dim, kernel_size=patch_size, stride=patch_size)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.pos_embed = nn.Parameter(torch.randn(1, num_patches + 1, embed_dim) * 0.02)
        self.norm1 = nn.LayerNorm(embed_dim)
        self.qkv = nn.Linear(embed_dim, 3 * embed_dim)
        self.proj = nn.Linear(embed_dim, embed_dim)
        self.norm2 = nn.LayerNorm(embed_dim)
        self.fc1 = nn.Linear(embed_dim, mlp_ratio * embed_dim)
        self.fc2 = nn.Linear(mlp_ratio * embed_dim, embed_dim)
        self.norm = nn.LayerNorm(embed_dim)
        self.head = nn.Linear(embed_dim, num_classes)

    def attention(self, x):
        B, N, C = x.shape
        hd = C // self.num_heads
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, hd).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = (q @ k.transpose(-2, -1)) * (hd ** -0.5)
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj(x)

    def forward(self, img):
        x = self.patch_embed(img).flatten(2).transpose(1, 2)
        cls = self.cls_token.expand(x.shape[0], -1, -1)
        x = torch.cat([cls, x], dim=1) + self.pos_embed
        x = x + self.attention(self.norm1(x))
        x = x + self.fc2(F.gelu(self.fc1(self.norm2(x))))
        x = self.norm(x)
        return self.head(x[:, 0])


def get_inputs():
    return [torch.rand(batch_size, in_channels, image_size, image_size)]


def get_init_inputs():
    return [image_size, patch_size, in_channels, embed_dim, num_heads, mlp_ratio, num_classes]

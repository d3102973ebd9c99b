"""pi0 (Physical Intelligence's 3B vision-language-action model) at its published size, as
transformers builds it (`PI0Config()`'s defaults: PaliGemma's SigLIP So400m/14 at 224 px and
Gemma 2B, an 18-layer action expert of width 1024, 50 actions per chunk, 10 flow-matching
steps), one inference: the VLM prefix once, then 10 denoising steps of the action expert
over the prefix's cache (`PI0ForConditionalGeneration.sample_actions`).

Inputs: three cameras at 224 x 224 (256 image tokens each, as pi0's base and two wrist
cameras), 48 language tokens, a 32-dim state and the initial noise. Built on fake tensors
with --no-validate (nothing allocated); the paper's Table 4 row:

    solar inverse workloads/robotics/pi0.py --rate 500Hz --arch Jetson_Thor --quantize w4a4
"""

import torch
import transformers

CAMERAS = 3
IMAGE = 224
TEXT = 48
IMAGE_TOKEN = 257152  # PaliGemmaConfig.image_token_index


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.pi0 = transformers.PI0ForConditionalGeneration(transformers.PI0Config()).eval()
        self.pi0.to(torch.bfloat16)

    def forward(self, state, input_ids, pixel_values, pixel_attention_mask, noise):
        return self.pi0.sample_actions(
            state=state,
            input_ids=input_ids,
            pixel_values=pixel_values,
            pixel_attention_mask=pixel_attention_mask,
            noise=noise,
        )


def get_inputs():
    image_tokens = CAMERAS * (IMAGE // 14) ** 2
    ids = torch.cat(
        [torch.full((1, image_tokens), IMAGE_TOKEN), torch.randint(0, IMAGE_TOKEN, (1, TEXT))], dim=1
    )
    return [
        torch.randn(1, 32, dtype=torch.bfloat16),
        ids,
        torch.randn(1, CAMERAS, 3, IMAGE, IMAGE, dtype=torch.bfloat16),
        torch.ones(1, CAMERAS, dtype=torch.bool),
        torch.randn(1, 50, 32, dtype=torch.bfloat16),
    ]


def get_init_inputs():
    return []

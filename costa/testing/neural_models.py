"""FAKE weights: random-weight models of the real classes, saved in the real on-disk layouts (tests and benchmarks
only).

No weights can be downloaded on the build machines, so tests build `tiny` models (seconds, a few MB) and the neural
benchmark builds `full`-size architectures (compute time does not depend on the weights' values). Each builder writes
`<models_dir>/<hub repo id>/` exactly as a hub snapshot, so the tools load it through the same code as real weights.
Tokenizers are written from a small vocabulary of our own. Imports torch, transformers and diffusers when called.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

Size = Literal["tiny", "full"]

WORDS = [
    "dog",
    "cat",
    "car",
    "cup",
    "person",
    "tree",
    "sky",
    "house",
    "red",
    "blue",
    "green",
    "yellow",
    "white",
    "black",
    "a",
    "the",
    "of",
    "in",
    "on",
    "with",
    "and",
    "background",
    "object",
    "yogurt",
    "cucumber",
    "carrot",
    "remove",
    "replace",
    "add",
    "winter",
    "snow",
    "sunset",
    "photo",
    "picture",
    "bird",
    "table",
    "chair",
    "flower",
]


def _bert_vocab(path: Path) -> Path:
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", *WORDS, *"abcdefghijklmnopqrstuvwxyz"]
    path.write_text("\n".join(tokens) + "\n", encoding="utf-8")
    return path


def _clip_tokenizer(folder: Path):  # -> CLIPTokenizer
    from transformers import CLIPTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    chars = list("abcdefghijklmnopqrstuvwxyz.,")
    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1, "!": 2}
    for c in chars:
        vocab.setdefault(c, len(vocab))
        vocab.setdefault(c + "</w>", len(vocab))
    merges = ["#version: 0.2"]
    for w in WORDS:
        if len(w) >= 2:
            merges.append(f"{w[0]} {w[1]}</w>" if len(w) == 2 else f"{w[0]} {w[1]}")
            vocab.setdefault(w[0] + w[1] + ("</w>" if len(w) == 2 else ""), len(vocab))
    (folder / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (folder / "merges.txt").write_text("\n".join(merges) + "\n", encoding="utf-8")
    return CLIPTokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"), model_max_length=77)


def build_grounding_dino(
    models_dir: Path, size: Size = "tiny", repo: str = "IDEA-Research/grounding-dino-tiny"
) -> Path:
    """Grounding DINO (Swin + BERT); `full` is grounding-dino-tiny's architecture (≈ 172 M parameters)."""
    import torch

    # BertTokenizerFast: transformers 5 keeps it as a runtime alias of BertTokenizer; its type information omits it.
    from transformers import (  # type: ignore[attr-defined]
        BertTokenizerFast,
        GroundingDinoConfig,
        GroundingDinoForObjectDetection,
        GroundingDinoImageProcessor,
        GroundingDinoProcessor,
    )

    out = models_dir / repo
    out.mkdir(parents=True, exist_ok=True)
    # transformers 5's BertTokenizerFast takes the vocabulary itself; a `vocab_file` keyword is silently ignored
    # (every word would be [UNK] and the noun could never match a phrase).
    words = _bert_vocab(out / "vocab.txt").read_text(encoding="utf-8").split()
    tokenizer = BertTokenizerFast(vocab={w: i for i, w in enumerate(words)})
    torch.manual_seed(0)
    if size == "tiny":
        config = GroundingDinoConfig(
            backbone_config={
                "model_type": "swin",
                "embed_dim": 24,
                "depths": [1, 1, 1, 1],
                "num_heads": [1, 1, 1, 1],
                "out_features": ["stage2", "stage3", "stage4"],
                "image_size": 224,
                "window_size": 7,
            },
            text_config={
                "model_type": "bert",
                "vocab_size": len(tokenizer),
                "hidden_size": 32,
                "num_hidden_layers": 1,
                "num_attention_heads": 2,
                "intermediate_size": 37,
            },
            d_model=32,
            encoder_layers=1,
            decoder_layers=2,
            encoder_ffn_dim=32,
            decoder_ffn_dim=32,
            num_queries=20,
            encoder_attention_heads=2,
            decoder_attention_heads=2,
            num_feature_levels=3,
        )
        image_processor = GroundingDinoImageProcessor(size={"shortest_edge": 224, "longest_edge": 320})
    else:
        config = GroundingDinoConfig()  # the defaults are grounding-dino-tiny's (Swin-T, BERT-base, 900 queries)
        image_processor = GroundingDinoImageProcessor()
    model = GroundingDinoForObjectDetection(config).eval()
    model.save_pretrained(out)
    GroundingDinoProcessor(image_processor=image_processor, tokenizer=tokenizer).save_pretrained(out)
    return out


def build_sam(models_dir: Path, size: Size = "tiny", repo: str = "facebook/sam-vit-base") -> Path:
    """SAM through transformers' `SamModel`; `full` is ViT-B (≈ 94 M parameters, 1024² input)."""
    import torch
    from transformers import SamConfig, SamImageProcessor, SamModel, SamProcessor

    out = models_dir / repo
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    if size == "tiny":
        hidden = 32
        config = SamConfig(
            vision_config={
                "hidden_size": 48,
                "num_hidden_layers": 2,
                "num_attention_heads": 2,
                "mlp_dim": 64,
                "image_size": 256,
                "patch_size": 16,
                "output_channels": hidden,
                "global_attn_indexes": [1],
                "window_size": 4,
                "num_pos_feats": hidden // 2,
            },
            prompt_encoder_config={
                "hidden_size": hidden,
                "image_size": 256,
                "patch_size": 16,
                "mask_input_channels": 4,
            },
            mask_decoder_config={
                "hidden_size": hidden,
                "num_hidden_layers": 2,
                "num_attention_heads": 2,
                "mlp_dim": 64,
                "iou_head_hidden_dim": 32,
            },
        )
        processor = SamProcessor(
            image_processor=SamImageProcessor(
                size={"longest_edge": 256}, pad_size={"height": 256, "width": 256}, mask_size={"longest_edge": 64}
            )
        )
    else:
        config = SamConfig()  # ViT-B defaults
        processor = SamProcessor(image_processor=SamImageProcessor())
    SamModel(config).eval().save_pretrained(out)
    processor.save_pretrained(out)
    return out


def _sd_parts(size: Size, in_channels: int, family: Literal["sd2", "sd15"]):
    import torch
    from diffusers import AutoencoderKL, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel

    torch.manual_seed(0)
    if size == "tiny":
        unet = UNet2DConditionModel(
            block_out_channels=(32, 64),
            layers_per_block=1,
            sample_size=32,
            in_channels=in_channels,
            out_channels=4,
            down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
            up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
            cross_attention_dim=32,
            attention_head_dim=4,
        )
        vae = AutoencoderKL(
            block_out_channels=[32, 64],
            down_block_types=["DownEncoderBlock2D"] * 2,
            up_block_types=["UpDecoderBlock2D"] * 2,
            latent_channels=4,
            sample_size=64,
        )
        text = CLIPTextConfig(
            hidden_size=32,
            intermediate_size=37,
            num_hidden_layers=2,
            num_attention_heads=4,
            vocab_size=1000,
            bos_token_id=0,
            eos_token_id=1,
            pad_token_id=1,
        )
        return unet, vae, CLIPTextModel(text)
    sd2 = family == "sd2"
    unet = UNet2DConditionModel(
        sample_size=64,
        in_channels=in_channels,
        out_channels=4,
        block_out_channels=(320, 640, 1280, 1280),
        layers_per_block=2,
        down_block_types=("CrossAttnDownBlock2D",) * 3 + ("DownBlock2D",),
        up_block_types=("UpBlock2D",) + ("CrossAttnUpBlock2D",) * 3,
        cross_attention_dim=1024 if sd2 else 768,
        attention_head_dim=(5, 10, 20, 20) if sd2 else 8,
        use_linear_projection=sd2,
    )
    vae = AutoencoderKL(
        block_out_channels=[128, 256, 512, 512],
        down_block_types=["DownEncoderBlock2D"] * 4,
        up_block_types=["UpDecoderBlock2D"] * 4,
        latent_channels=4,
        layers_per_block=2,
        sample_size=512,
    )
    if sd2:  # OpenCLIP ViT-H text tower as SD 2 uses it (23 layers)
        text = CLIPTextConfig(
            hidden_size=1024,
            intermediate_size=4096,
            num_hidden_layers=23,
            num_attention_heads=16,
            projection_dim=512,
            hidden_act="gelu",
            vocab_size=49408,
        )
    else:
        # CLIP ViT-L/14's text tower as SD 1.5 uses it (CLIPTextConfig's own defaults are ViT-B/32's: 512 wide)
        text = CLIPTextConfig(
            hidden_size=768,
            intermediate_size=3072,
            num_hidden_layers=12,
            num_attention_heads=12,
            projection_dim=768,
            hidden_act="quick_gelu",
            vocab_size=49408,
        )
    return unet, vae, CLIPTextModel(text)


def build_sd_inpaint(
    models_dir: Path | None, size: Size = "tiny", repo: str = "stabilityai/stable-diffusion-2-inpainting"
):  # -> Path | StableDiffusionInpaintPipeline
    """An SD-2-style inpainting pipeline (UNet with 9 input channels); `full` is SD-2-inpainting's architecture.

    Returns the snapshot folder, or the pipeline itself when `models_dir` is None (benchmarks skip the disk).
    """
    from diffusers import DDIMScheduler, StableDiffusionInpaintPipeline

    unet, vae, text = _sd_parts(size, 9, "sd2")
    tok_dir = (models_dir / repo / "tokenizer") if models_dir else Path(_tmp()) / "tokenizer"
    pipe = StableDiffusionInpaintPipeline(
        vae=vae,
        text_encoder=text,
        tokenizer=_clip_tokenizer(tok_dir),
        unet=unet,
        scheduler=DDIMScheduler(steps_offset=1),
        safety_checker=None,
        feature_extractor=None,
        requires_safety_checker=False,
    )
    if models_dir is None:
        return pipe
    out = models_dir / repo
    pipe.save_pretrained(out)  # type: ignore[attr-defined]  # diffusers: inherited from DiffusionPipeline
    return out


def build_instruct_pix2pix(models_dir: Path | None, size: Size = "tiny", repo: str = "timbrooks/instruct-pix2pix"):
    """InstructPix2Pix (an SD 1.5 UNet with 8 input channels); `full` is the real architecture."""
    from diffusers import EulerAncestralDiscreteScheduler, StableDiffusionInstructPix2PixPipeline

    unet, vae, text = _sd_parts(size, 8, "sd15")
    tok_dir = (models_dir / repo / "tokenizer") if models_dir else Path(_tmp()) / "tokenizer"
    pipe = StableDiffusionInstructPix2PixPipeline(
        vae=vae,
        text_encoder=text,
        tokenizer=_clip_tokenizer(tok_dir),
        unet=unet,
        scheduler=EulerAncestralDiscreteScheduler(),
        safety_checker=None,
        feature_extractor=None,
        requires_safety_checker=False,
    )
    if models_dir is None:
        return pipe
    out = models_dir / repo
    pipe.save_pretrained(out)  # type: ignore[attr-defined]  # diffusers: inherited from DiffusionPipeline
    return out


def _tmp() -> str:
    import tempfile

    return tempfile.mkdtemp(prefix="costa_tok_")


def build_u2net_onnx(models_dir: Path, name: str = "u2net.onnx", red_is_salient: bool = False) -> Path:
    """A tiny stand-in for rembg's `u2net.onnx` (FAKE weights): U²-Net's input name (`input.1`) and shape
    (1, 3, 320, 320), and seven sigmoid side outputs of shape (1, 1, 320, 320) like the real model's, written with
    `torch.onnx.export` (needs the `onnx` package) to `models_dir/name`. Weights are random, or with `red_is_salient`
    set by hand so the saliency is sigmoid(4·relu(R − B)) of the normalised input (red things are "the subject")."""
    import torch

    class TinySaliency(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = torch.nn.Conv2d(3, 4, 3, padding=1)
            self.conv2 = torch.nn.Conv2d(4, 1, 3, padding=1)

        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
            d0 = self.conv2(torch.relu(self.conv1(x)))
            return tuple(torch.sigmoid(d0 * (1.0 + 0.1 * k)) for k in range(7))

    torch.manual_seed(0)
    net = TinySaliency().eval()
    if red_is_salient:
        with torch.no_grad():
            for conv in (net.conv1, net.conv2):
                conv.weight.zero_()
                if conv.bias is not None:  # always set (bias=True); the check is for the type checker
                    conv.bias.zero_()
            net.conv1.weight[0, 0, 1, 1], net.conv1.weight[0, 2, 1, 1] = 1.0, -1.0
            net.conv2.weight[0, 0, 1, 1] = 4.0
    out = models_dir / name
    models_dir.mkdir(parents=True, exist_ok=True)
    with torch.no_grad():
        torch.onnx.export(
            net,
            (torch.zeros(1, 3, 320, 320),),
            str(out),
            input_names=["input.1"],
            output_names=[f"d{k}" for k in range(7)],
            dynamo=False,
        )
    return out

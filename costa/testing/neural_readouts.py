"""Random-weight detectors, depth, CLIP and BLIP models of the real classes, in the real hub-snapshot layouts.

FAKE weights for tests and benchmarks (see `costa.testing.neural_models`): `tiny` models take seconds to build and a
few MB, `full` ones are the real checkpoints' architectures (compute time does not depend on the weights' values).
Each builder writes `<models_dir>/<hub repo id>/` (config.json, model.safetensors, processor and tokenizer files) so
the tools load it through the same resolver and `from_pretrained` code as real weights. Imports torch and
transformers when called.
"""

from __future__ import annotations

from pathlib import Path

from costa.testing.neural_models import WORDS, Size, _bert_vocab, _clip_tokenizer

#: The 80 COCO detection classes in the order COCO-trained DETR / RT-DETR checkpoints number them (config.id2label).
COCO_CLASSES = (
    "person", "bicycle", "car", "motorcycle", "airplane", "bus", "train", "truck", "boat", "traffic_light",
    "fire_hydrant", "stop_sign", "parking_meter", "bench", "bird", "cat", "dog", "horse", "sheep", "cow", "elephant",
    "bear", "zebra", "giraffe", "backpack", "umbrella", "handbag", "tie", "suitcase", "frisbee", "skis", "snowboard",
    "sports_ball", "kite", "baseball_bat", "baseball_glove", "skateboard", "surfboard", "tennis_racket", "bottle",
    "wine_glass", "cup", "fork", "knife", "spoon", "bowl", "banana", "apple", "sandwich", "orange", "broccoli",
    "carrot", "hot_dog", "pizza", "donut", "cake", "chair", "couch", "potted_plant", "bed", "dining_table", "toilet",
    "tv", "laptop", "mouse", "remote", "keyboard", "cell_phone", "microwave", "oven", "toaster", "sink",
    "refrigerator", "book", "clock", "vase", "scissors", "teddy_bear", "hair_drier", "toothbrush",
)  # fmt: skip
COCO_ID2LABEL = {i: name.replace("_", " ") for i, name in enumerate(COCO_CLASSES)}


def build_rtdetr(
    models_dir: Path, size: Size = "tiny", repo: str = "PekingU/rtdetr_r50vd_coco_o365", favour: str | None = "dog"
) -> Path:
    """RT-DETR (ResNet backbone, no timm) with COCO's 80 labels; `full` is RT-DETR-R50vd (≈ 43 M parameters).

    favour: a COCO class the tiny model's class heads are biased towards (random weights score every class about
        equally low; the bias makes the fake detector report that class with confidence ≈ 0.9, so a test or the
        benchmark runs the whole pipeline with the default threshold; compute time does not change).
    """
    import torch
    from transformers import RTDetrConfig, RTDetrForObjectDetection, RTDetrImageProcessor, RTDetrResNetConfig

    out = models_dir / repo
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    id2label, label2id = COCO_ID2LABEL, {v: k for k, v in COCO_ID2LABEL.items()}
    if size == "tiny":
        backbone = RTDetrResNetConfig(  # type: ignore[call-arg]  # out_features: a backbone-mixin keyword
            embedding_size=16, hidden_sizes=[16, 32, 64, 64], depths=[1, 1, 1, 1], layer_type="basic",
            out_features=["stage2", "stage3", "stage4"],
        )  # fmt: skip
        config = RTDetrConfig(
            backbone_config=backbone, encoder_in_channels=[32, 64, 64], encoder_hidden_dim=32, encoder_ffn_dim=32,
            encoder_attention_heads=2, d_model=32, decoder_in_channels=[32, 32, 32], decoder_ffn_dim=32,
            decoder_layers=2, decoder_attention_heads=2, num_queries=30, num_denoising=0, id2label=id2label,
            label2id=label2id,
        )  # fmt: skip
        processor = RTDetrImageProcessor(size={"height": 320, "width": 320})
    else:
        config = RTDetrConfig(
            id2label=id2label, label2id=label2id
        )  # the defaults are RT-DETR-R50vd's (300 queries, 640² input)
        processor = RTDetrImageProcessor()
    model = RTDetrForObjectDetection(config).eval()
    if favour is not None:
        k = COCO_CLASSES.index(favour.replace(" ", "_"))
        with torch.no_grad():
            for head in [model.model.enc_score_head, *model.model.decoder.class_embed]:
                head.bias[k] += 5.0
    model.save_pretrained(out)
    processor.save_pretrained(out)
    return out


def build_detr(models_dir: Path, repo: str = "PekingU/rtdetr_r50vd_coco_o365", favour: str = "dog") -> Path:
    """A tiny DETR with a transformers ResNet backbone (`use_timm_backbone=False`, so no timm) and COCO's labels,
    saved under `repo` so the closed-set detector's row loads it; the class head is biased towards `favour`."""
    import torch
    from transformers import DetrConfig, DetrForObjectDetection, DetrImageProcessor, ResNetConfig

    out = models_dir / repo
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    backbone = ResNetConfig(  # type: ignore[call-arg]  # out_features: a backbone-mixin keyword
        embedding_size=16, hidden_sizes=[16, 32, 64, 64], depths=[1, 1, 1, 1], layer_type="basic",
        out_features=["stage4"],
    )  # fmt: skip
    config = DetrConfig(  # type: ignore[call-arg]  # the backbone keywords are read through **kwargs
        use_timm_backbone=False, use_pretrained_backbone=False, backbone=None, backbone_config=backbone, d_model=32,
        encoder_layers=1, decoder_layers=1, encoder_ffn_dim=32, decoder_ffn_dim=32, encoder_attention_heads=2,
        decoder_attention_heads=2, num_queries=20, id2label=COCO_ID2LABEL,
        label2id={v: k for k, v in COCO_ID2LABEL.items()},
    )  # fmt: skip
    model = DetrForObjectDetection(config).eval()
    with torch.no_grad():
        model.class_labels_classifier.bias[COCO_CLASSES.index(favour)] += 5.0
    model.save_pretrained(out)
    DetrImageProcessor(size={"shortest_edge": 128, "longest_edge": 200}).save_pretrained(out)
    return out


def build_depth_anything(
    models_dir: Path, size: Size = "tiny", repo: str = "depth-anything/Depth-Anything-V2-Small-hf"
) -> Path:
    """Depth Anything (DINOv2 backbone + DPT head); `full` is the Small model's architecture (≈ 25 M parameters)."""
    import torch
    from transformers import DepthAnythingConfig, DepthAnythingForDepthEstimation, Dinov2Config, DPTImageProcessor

    out = models_dir / repo
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    if size == "tiny":
        backbone = Dinov2Config(  # type: ignore[call-arg]  # out_indices: a backbone-mixin keyword
            hidden_size=32, num_hidden_layers=4, num_attention_heads=2, mlp_ratio=2, image_size=70, patch_size=14,
            out_indices=[1, 2, 3, 4], apply_layernorm=True, reshape_hidden_states=False,
        )  # fmt: skip
        config = DepthAnythingConfig(
            backbone_config=backbone, reassemble_hidden_size=32, neck_hidden_sizes=[8, 16, 32, 32],
            fusion_hidden_size=16, head_hidden_size=8,
        )  # fmt: skip
        side = 70
    else:
        config = DepthAnythingConfig()  # the defaults are Depth-Anything-Small's (DINOv2-S, 518² input)
        side = 518
    processor = DPTImageProcessor(
        size={"height": side, "width": side}, keep_aspect_ratio=True, ensure_multiple_of=14, do_pad=False,
        resample=3, image_mean=[0.485, 0.456, 0.406], image_std=[0.229, 0.224, 0.225],
    )  # fmt: skip
    DepthAnythingForDepthEstimation(config).eval().save_pretrained(out)
    processor.save_pretrained(out)
    return out


def build_dpt_hybrid(models_dir: Path, size: Size = "tiny", repo: str = "Intel/dpt-hybrid-midas") -> Path:
    """DPT-hybrid (BiT ResNet + ViT, MiDaS 3.0); `full` is dpt-hybrid-midas's architecture (≈ 123 M parameters)."""
    import torch
    from transformers import BitConfig, DPTConfig, DPTForDepthEstimation, DPTImageProcessor

    out = models_dir / repo
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    if size == "tiny":
        backbone = BitConfig(  # type: ignore[call-arg]  # out_features: a backbone-mixin keyword
            embedding_size=8, hidden_sizes=[8, 16, 32], depths=[1, 1, 1], layer_type="bottleneck", num_groups=4,
            global_padding="SAME", embedding_dynamic_padding=True, out_features=["stage1", "stage2", "stage3"],
        )  # fmt: skip
        config = DPTConfig(
            is_hybrid=True, backbone_config=backbone, hidden_size=32, num_hidden_layers=4, num_attention_heads=2,
            intermediate_size=37, image_size=64, patch_size=16, backbone_out_indices=[0, 1, 2, 3],
            neck_hidden_sizes=[8, 16, 32, 32], fusion_hidden_size=16, backbone_featmap_shape=[1, 32, 4, 4],
            use_auxiliary_head=False,
        )  # fmt: skip
        side = 64
    else:
        # dpt-hybrid-midas: BiT-R50 stem + ViT-B/16 at 384², its neck widths and reassembly factors
        config = DPTConfig(is_hybrid=True, neck_hidden_sizes=[256, 512, 768, 768], reassemble_factors=[1, 1, 1, 0.5])
        side = 384
    processor = DPTImageProcessor(  # as dpt-hybrid-midas: a fixed square input (the hybrid's patch grid is fixed)
        size={"height": side, "width": side}, keep_aspect_ratio=False, ensure_multiple_of=1, resample=3,
        image_mean=[0.5, 0.5, 0.5], image_std=[0.5, 0.5, 0.5],
    )  # fmt: skip
    DPTForDepthEstimation(config).eval().save_pretrained(out)
    processor.save_pretrained(out)
    return out


def build_clip(models_dir: Path, size: Size = "tiny", repo: str = "openai/clip-vit-base-patch32") -> Path:
    """CLIP with a tokenizer from our small vocabulary; `full` is ViT-B/32's architecture (≈ 151 M parameters)."""
    import torch
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor

    out = models_dir / repo
    tokenizer = _clip_tokenizer(out)
    torch.manual_seed(0)
    ids = {"bos_token_id": 0, "eos_token_id": 1, "pad_token_id": 1}
    if size == "tiny":
        config = CLIPConfig(
            text_config={"vocab_size": len(tokenizer), "hidden_size": 32, "intermediate_size": 37,
                         "num_hidden_layers": 2, "num_attention_heads": 2, "max_position_embeddings": 77, **ids},
            vision_config={"hidden_size": 32, "intermediate_size": 37, "num_hidden_layers": 2,
                           "num_attention_heads": 2, "image_size": 32, "patch_size": 8},
            projection_dim=16,
        )  # fmt: skip
        side = 32
    else:
        config = CLIPConfig(text_config={"vocab_size": 49408}, vision_config={"patch_size": 32})  # ViT-B/32
        side = 224
    processor = CLIPImageProcessor(size={"shortest_edge": side}, crop_size={"height": side, "width": side})
    CLIPModel(config).eval().save_pretrained(out)
    CLIPProcessor(image_processor=processor, tokenizer=tokenizer).save_pretrained(out)
    return out


def build_blip(models_dir: Path, size: Size = "tiny", repo: str = "Salesforce/blip-image-captioning-base") -> Path:
    """BLIP captioning (ViT + BERT decoder, BERT tokenizer with "[DEC]"); `full` is the base model (≈ 247 M)."""
    import torch

    # BertTokenizerFast: transformers 5 keeps it as a runtime alias of BertTokenizer; its type information omits it.
    from transformers import (  # type: ignore[attr-defined]
        BertTokenizerFast,
        BlipConfig,
        BlipForConditionalGeneration,
        BlipImageProcessor,
        BlipProcessor,
    )

    out = models_dir / repo
    out.mkdir(parents=True, exist_ok=True)
    # transformers 5's BertTokenizerFast takes the vocabulary itself (`vocab`); a `vocab_file` keyword is ignored.
    words = _bert_vocab(out / "vocab.txt").read_text(encoding="utf-8").split()
    if size == "full":  # BERT-base's vocabulary size (30522 word pieces, then "[DEC]")
        words += [f"piece{i}" for i in range(30522 - len(words))]
        (out / "vocab.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
    tokenizer = BertTokenizerFast(
        vocab={w: i for i, w in enumerate(words)}, bos_token="[DEC]", additional_special_tokens=["[DEC]"]
    )
    ids = {
        "bos_token_id": tokenizer.convert_tokens_to_ids("[DEC]"),
        "pad_token_id": tokenizer.pad_token_id,
        "sep_token_id": tokenizer.sep_token_id,
        "eos_token_id": tokenizer.sep_token_id,
    }
    torch.manual_seed(0)
    if size == "tiny":
        config = BlipConfig(
            text_config={"vocab_size": len(tokenizer), "hidden_size": 32, "intermediate_size": 37,
                         "num_hidden_layers": 2, "num_attention_heads": 2, "encoder_hidden_size": 32, **ids},
            vision_config={"hidden_size": 32, "intermediate_size": 37, "num_hidden_layers": 2,
                           "num_attention_heads": 2, "image_size": 32, "patch_size": 8},
            projection_dim=16,
        )  # fmt: skip
        side = 32
    else:
        config = BlipConfig(text_config={"vocab_size": len(tokenizer), **ids}, vision_config={"image_size": 384})
        side = 384
    processor = BlipImageProcessor(size={"height": side, "width": side})
    model = BlipForConditionalGeneration(config).eval()
    # Random weights favour special tokens (an empty caption): push them down so words come out (and the benchmark
    # times a caption of the full `max_tokens`, the slowest case).
    with torch.no_grad():
        for tid in tokenizer.all_special_ids:
            model.text_decoder.cls.predictions.bias[tid] = -100.0
            model.text_decoder.cls.predictions.decoder.bias[tid] = -100.0
    model.save_pretrained(out)
    BlipProcessor(image_processor=processor, tokenizer=tokenizer).save_pretrained(out)
    return out


__all__ = [
    "COCO_CLASSES",
    "COCO_ID2LABEL",
    "WORDS",
    "build_blip",
    "build_clip",
    "build_depth_anything",
    "build_detr",
    "build_dpt_hybrid",
    "build_rtdetr",
]

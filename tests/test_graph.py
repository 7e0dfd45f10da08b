"""Tool dependency graph and tool subgraphs derived from typed I/O."""

from __future__ import annotations

import networkx as nx

from costa.graph import GOAL, START, StepNode, build_plan_graph, build_subtask_graph, build_tdg, subtask_chains
from costa.tables import load_tables
from costa.types import Plan, Subtask

T = load_tables()


def everything(tool: str) -> bool:
    return True


def ready(tool: str) -> bool:
    """Ready on the CPU install: the implemented embedded tools (neural ones need weights, API ones an endpoint)."""
    return T.tools[tool].status == "ready" and T.tools[tool].backend == "embedded"


def test_tdg_edges_come_from_typed_io() -> None:
    g = build_tdg(T)
    assert g.edges["grounding_dino", "sam"]["types"] == frozenset({"boxes"})
    assert g.edges["sam", "sd_inpaint"]["types"] == frozenset({"masks"})
    assert g.edges["rapidocr_detect", "text_remove_telea"]["types"] == frozenset({"text_regions"})
    # Image alone never makes an edge: every tool sees the current image.
    assert not g.has_edge("sd_inpaint", "recolor_lab")
    for a, b, data in g.edges(data=True):
        shared = set(T.tools[a].outputs) & set(T.tools[b].inputs) - {"image"}
        assert data["types"] == frozenset(shared) and shared


def test_recolour_chains_match_the_costa_demo() -> None:
    chains = set(subtask_chains(T, "object_recoloration", frozenset(), everything))
    # The images-API recolourer edits inside a mask (costa.tools.image_api), so it follows a segmenter too.
    assert ("sd_search_recolor",) not in chains
    assert ("grounding_dino", "sam", "sd_search_recolor") in chains
    assert ("grounding_dino", "sam", "sd_inpaint") in chains
    assert ("yolov7", "sam", "sd_inpaint") in chains
    # No chain may skip the segmenter: sd_inpaint needs masks, detectors give boxes.
    assert ("grounding_dino", "sd_inpaint") not in chains
    for c in chains:
        assert "image" in T.tools[c[-1]].outputs


def test_ready_only_recolour_grounds_by_colour_word_or_user_region() -> None:
    by_colour = {("colour_grounder", "recolor_lab"), ("colour_grounder", "recolor_hsv")}
    assert set(subtask_chains(T, "object_recoloration", frozenset(), ready)) == by_colour
    with_box = set(subtask_chains(T, "object_recoloration", frozenset({"boxes"}), ready))
    assert with_box == by_colour | {
        (segmenter, recolourer)
        for segmenter in ("grabcut_segment", "box_mask", "u2net_box")
        for recolourer in ("recolor_lab", "recolor_hsv")
    }
    with_mask = set(subtask_chains(T, "object_recoloration", frozenset({"masks"}), ready))
    assert with_mask == by_colour | {("recolor_lab",), ("recolor_hsv",)}
    with_clicks = set(subtask_chains(T, "object_recoloration", frozenset({"points"}), ready))
    assert with_clicks == by_colour | {
        (segmenter, recolourer)
        for segmenter in ("points_grabcut", "u2net_points")
        for recolourer in ("recolor_lab", "recolor_hsv")
    }


def test_privacy_and_background_chains_start_from_detectors() -> None:
    editors = ("blur_region", "pixelate_region")
    people_boxes = ("hog_people", "selfie_people_boxes")
    assert set(subtask_chains(T, "privacy_blur", frozenset(), ready)) == (
        {(d, "box_mask", e) for d in ("haar_faces", "blazeface_faces", *people_boxes) for e in editors}
        | {(d, "u2net_box", e) for d in ("haar_faces", "blazeface_faces", *people_boxes) for e in editors}
        | {("selfie_people", e) for e in editors}
    )
    assert set(subtask_chains(T, "background_removal", frozenset(), ready)) == (
        {(d, "grabcut_background") for d in people_boxes}
        | {(d, "u2net_box", "mask_background") for d in people_boxes}
        | {("rembg_u2net",), ("u2net_salient", "mask_background"), ("selfie_people", "mask_background")}
    )
    with_mask = set(subtask_chains(T, "background_removal", frozenset({"masks"}), ready))
    assert ("mask_background",) in with_mask


def test_plan_graph_chains_subtasks_in_order() -> None:
    plan = Plan(
        subtasks=(
            Subtask(id="s1", kind="text_replacement", target="SALE", result="OPEN"),
            Subtask(id="s2", kind="text_removal", target="FREE", parents=("s1",)),
        )
    )
    tg = build_plan_graph(T, plan, ready)
    g = tg.graph
    assert nx.is_directed_acyclic_graph(g)
    paths = [tuple(n.tool for n in p[1:-1]) for p in nx.all_simple_paths(g, START, GOAL)]
    assert len(paths) == 2 * 3  # two replacers × three removers (Telea, PatchMatch, flat paint-over)
    assert ("rapidocr_detect", "text_replace_pillow", "rapidocr_detect", "text_remove_telea") in paths
    for p in nx.all_simple_paths(g, START, GOAL):
        assert [n.subtask_id for n in p[1:-1]] == ["s1", "s1", "s2", "s2"]


def test_tree_plan_offers_alternative_orderings() -> None:
    plan = Plan(
        form="tree",
        subtasks=(
            Subtask(id="s1", kind="text_removal", target="A"),
            Subtask(id="s2", kind="text_redaction", target="phone number"),
        ),
    )
    tg = build_plan_graph(T, plan, ready)
    orders = {tuple(dict.fromkeys(n.subtask_id for n in p[1:-1])) for p in nx.all_simple_paths(tg.graph, START, GOAL)}
    assert orders == {("s1", "s2"), ("s2", "s1")}
    # With a dependency only one order remains.
    dep = Plan(form="tree", subtasks=(plan.subtasks[0], plan.subtasks[1].model_copy(update={"parents": ("s1",)})))
    tg = build_plan_graph(T, dep, ready)
    orders = {tuple(dict.fromkeys(n.subtask_id for n in p[1:-1])) for p in nx.all_simple_paths(tg.graph, START, GOAL)}
    assert orders == {("s1", "s2")}


def test_unavailable_subtask_is_reported_with_what_would_enable_it() -> None:
    plan = Plan(subtasks=(Subtask(id="s1", kind="image_captioning"), Subtask(id="s2", kind="text_removal")))
    tg = build_plan_graph(T, plan, ready, why_not=lambda t: "needs an API endpoint")
    assert set(tg.unavailable) == {"s1"}
    assert "llm_caption: needs an API endpoint" in tg.unavailable["s1"]
    assert {n.subtask_id for n in tg.steps} == {"s2"}


def test_subtask_graph_for_local_search() -> None:
    s = Subtask(id="s7", kind="object_removal", target="cat", parents=("s1",))
    tg = build_subtask_graph(T, s, ready, given=frozenset({"masks"}))
    finals = {n.tools for n in tg.steps if n.final}
    removers = ("remove_patchmatch", "remove_telea")
    segmenters = ("grabcut_segment", "box_mask", "u2net_box")
    assert finals == (
        {(r,) for r in removers}
        | {("colour_grounder", r) for r in removers}
        | {("selfie_people", r) for r in removers}
        | {(d, s, r) for d in ("hog_people", "selfie_people_boxes") for s in segmenters for r in removers}
    )
    assert all(isinstance(n, StepNode) and n.order == ("s7",) for n in tg.steps)


def test_region_refusal_serves_a_target_once_and_the_whole_image_without_a_grounder() -> None:
    """The rule for image-wide editors a target limits (`ToolSpec.in_region`): the reading editor needs a given
    region, the grounded one serves only when none is given, and neither grounds a whole-image edit."""
    from costa.tables import load_tables
    from costa.turn.graphs import region_refusal
    from costa.types import Subtask

    tools = load_tables().tools
    direct, grounded = tools["global_adjust"], tools["region_adjust"]
    named = Subtask(id="s1", kind="global_adjustment", target="blue square", result="darker")
    whole = Subtask(id="s1", kind="global_adjustment", result="darker")
    none, box, mask = frozenset(), frozenset({"boxes"}), frozenset({"masks"})
    assert region_refusal(whole, direct, none) is None
    assert "whole image" in (region_refusal(whole, grounded, none) or "")
    assert "cannot find 'blue square' by itself" in (region_refusal(named, direct, none) or "")
    assert region_refusal(named, grounded, none) is None
    # a box only bounds a named thing: the reading editor would change the whole rectangle, so a segmenter fed the
    # box finds the thing and the grounded editor acts inside it; a target that names the region itself is the box
    assert "whole box around 'blue square'" in (region_refusal(named, direct, box) or "")
    assert region_refusal(named, grounded, box) is None
    area = Subtask(id="s1", kind="global_adjustment", target="top left corner", result="darker")
    assert region_refusal(area, direct, box) is None
    assert region_refusal(named, direct, box, segmentable=False) is None  # no editor fed masks: the box it is
    assert region_refusal(named, direct, mask) is None
    assert "given already" in (region_refusal(named, grounded, mask) or "")


def test_a_target_names_a_region_or_a_thing() -> None:
    from costa.turn.graphs import names_a_region

    assert all(names_a_region(t) for t in ("area", "selected region", "top-left corner", "this part", "box"))
    assert not any(
        names_a_region(t) for t in ("flag", "blue cup", "red car", "sky", "top hat", "left eye", "side table")
    )
    assert not names_a_region("")

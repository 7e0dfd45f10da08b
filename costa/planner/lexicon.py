"""Word lists the planner rules read (materials, emotions, actions, styles, properties) and number phrases.

Lists, not code: a word added here is understood by every rule that reads the list.

>>> read_scale("four times", smaller=False), read_scale("three times", smaller=True), read_scale("by 20%", False)
(4.0, 0.3333333333333333, 1.2)
>>> read_scale("half its size", smaller=True), read_scale("twice", smaller=False), read_scale("", False) is None
(0.5, 2.0, True)
>>> is_style("a Van Gogh painting"), is_style("a fox")
(True, False)
"""

from __future__ import annotations

import re
from collections.abc import Iterable


def _words(*groups: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(w.replace("_", " ") for g in groups for w in g.split()))


def alternation(words: Iterable[str]) -> str:
    """A regex alternation of `words`, longest first, spaces matching any whitespace or a hyphen."""
    return (
        "(?:"
        + "|".join(re.escape(w).replace(r"\ ", r"[\s-]+") for w in sorted(set(words), key=len, reverse=True))
        + ")"
    )


#: Materials an object can be made of (nouns; "out of glass").
MATERIALS = _words(
    "wood glass metal steel iron gold silver bronze copper brass aluminium aluminum chrome tin stone marble granite",
    "brick concrete clay ceramic porcelain plastic rubber leather paper cardboard fabric cloth cotton wool denim silk",
    "velvet lace ice crystal diamond jade bamboo wicker straw rattan cork wax chocolate candy sugar lego bread cheese",
    "sand snow jelly glass_mosaic stained_glass carbon_fibre carbon_fiber titanium pewter terracotta felt knit yarn",
)
#: Adjectives that name a material ("make the table wooden"); colours such as gold are left to recolouring.
MATERIAL_ADJECTIVES = _words(
    "wooden glass metal metallic steel iron stone marble granite brick concrete clay ceramic porcelain plastic rubber",
    "leather paper cardboard fabric woollen wool denim silk velvet crystal icy glassy bamboo wicker straw chrome",
    "chromed golden_metal stainless_steel plush knitted furry fluffy",
)
#: Emotions a face can show ("make her look sad").
EMOTIONS = _words(
    "happy happier sad sadder angry angrier surprised scared afraid frightened shocked excited worried bored tired",
    "sleepy calm serious confused disgusted amazed nervous joyful cheerful grumpy upset thoughtful annoyed delighted",
    "pensive content frightened furious proud relaxed sorrowful gloomy astonished terrified anxious peaceful smiling",
    "laughing crying frowning grinning shy embarrassed determined curious puzzled friendly fierce menacing",
)
#: Verbs that are facial expressions ("make the man smile").
EXPRESSION_VERBS = _words("smile frown laugh cry grin wink pout scowl smirk yawn blush sneer weep giggle")
#: Actions and poses ("let the horse run", "make the dog lie down").
ACTIONS = _words(
    "sit stand run jump walk fly lie kneel wave dance swim crouch bend lean stretch reach climb ride kick throw catch",
    "point hug kiss sleep eat drink play gallop bark roar sing talk cook fight raise lift cross clap bow squat nod",
    "rest hop skip sprint leap spread fold face touch grab sit_down stand_up lie_down jog march pray meditate read",
    "write paint draw type swing dive surf skate ski spin twirl pose hold_up raise_up look_up look_down look_away",
    "look_left look_right look_at turn_around turn_away turn_left turn_right turn_towards shake stomp chase carry",
    "pet feed high-five wag flap graze perch roll crawl relax yawn_widely shrug salute",
)
#: Looks and states of an object ("make the bread look burnt", "make the car rusty").
LOOKS = _words(
    "old new young wet dry rusty shiny glossy matte dirty clean frozen burnt burned ripe rotten broken cracked",
    "damaged worn weathered vintage antique modern futuristic transparent translucent glowing sparkling muddy dusty",
    "polished fresh wilted blooming melted soaked snowy sunburnt tanned bald hairy wrinkled elderly aged worn-out",
    "healthy sick injured bloody torn ragged neat tidy messy crumpled folded inflated deflated empty full lit unlit",
)
#: Poses a clause may name as where an object goes ("change the child's position to standing").
POSE_WORDS = _words("standing sitting lying kneeling crouching squatting seated upright reclining leaning lying_down")
#: Properties of an object or region a clause may raise, lower or change ("increase the visibility of the lake").
PROPERTIES = _words(
    "visibility prominence presence density intensity texture texture_detail details detail shape pattern thickness",
    "length width height transparency opacity shine glossiness reflection reflections reflectivity shadow shadows",
    "shading age hairstyle hair_style hair_length hair material expression posture pose outline curvature spacing",
    "clarity_of_detail definition luminosity glow sparkle wetness roughness smoothness size_and_shape form volume",
    "emphasis appearance look structure arrangement silhouette contour number layout",
)
#: Qualities of light and colour a clause adjusts ("add more contrast"): never objects to add or count.
ADJUSTABLE = frozenset(
    _words("contrast brightness saturation exposure warmth vibrance vibrancy sharpness clarity colour color light")
)
#: Artistic styles, media and artists that make a phrase a style ("a Van Gogh painting", "anime").
STYLES = _words(
    "painting painted oil_painting watercolour watercolor watercolours watercolors acrylic gouache sketch sketched",
    "pencil_sketch pencil_drawing charcoal drawing drawn hand-drawn hand_drawn ink line_art lineart cartoon cartoonish",
    "anime manga comic comics comic_book pixel_art 8-bit 16-bit pop_art cubist cubism impressionist impressionism",
    "expressionist expressionism surreal surrealist surrealism art_deco art_nouveau baroque renaissance ukiyo-e",
    "ukiyo_e stained_glass low_poly low-poly 3d_render claymation cyberpunk steampunk vaporwave synthwave noir",
    "film_noir vintage_film retro_film lomo polaroid woodcut engraving fresco mural pastel crayon digital_art",
    "concept_art ghibli studio_ghibli disney pixar lego origami mosaic graffiti_art street_art abstract minimalist",
    "minimalism vector flat_illustration illustration illustrated storybook fairy-tale chalk chalkboard neon_art",
    "van_gogh monet picasso da_vinci rembrandt dali warhol hokusai klimt munch vermeer matisse cezanne kandinsky",
    "pollock kahlo frida_kahlo banksy turner hopper rothko seurat pointillism pointillist art artistic cinematic",
    "gothic art_style oil sepia_photograph daguerreotype tintype halftone risograph blueprint",
)
_STYLE_RX = re.compile(r"\b" + alternation(STYLES) + r"\b", re.IGNORECASE)


def is_style(phrase: str) -> bool:
    """True when `phrase` names an artistic style, medium or artist."""
    return _STYLE_RX.search(phrase) is not None


_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "twenty": 20, "fifty": 50, "a hundred": 100, "twice": 2, "double": 2, "thrice": 3, "triple": 3, "quadruple": 4,
}  # fmt: skip
_FRACTION_WORDS = {"half": 0.5, "a half": 0.5, "a third": 1 / 3, "a quarter": 0.25, "one third": 1 / 3}
_NUMBER = r"(?P<n>\d+(?:\.\d+)?|" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + ")"
_PERCENT = re.compile(r"(?P<n>\d+(?:\.\d+)?)\s*(?:%|percent|per\s+cent)", re.IGNORECASE)
_TIMES = re.compile(_NUMBER + r"\s*(?:times|x|×|-?fold)?(?![a-z])", re.IGNORECASE)
_FRACTION = re.compile(r"\b(?P<f>a\s+half|half|a\s+third|one\s+third|a\s+quarter)\b", re.IGNORECASE)


def read_scale(text: str, smaller: bool) -> float | None:
    """The size factor a phrase asks for: "four times" → 4 (or 1/4 when `smaller`), "by 20%" → 1.2 (0.8), "half" →
    0.5 (1.5 after "by" when larger), "twice" → 2; None when the phrase has no amount."""
    text = " ".join(text.split())
    if not text:
        return None
    m = _PERCENT.search(text)
    if m:
        p = float(m.group("n")) / 100
        if re.search(r"\bto\s+" + re.escape(m.group(0)), text, re.IGNORECASE):
            return p
        return 1 - p if smaller else 1 + p
    m = _FRACTION.search(text)
    if m:
        f = _FRACTION_WORDS[" ".join(m.group("f").lower().split())]
        if not smaller and re.search(r"\bby\s+(?:a\s+)?" + m.group("f"), text, re.IGNORECASE):
            return 1 + f
        return f
    m = _TIMES.search(text)
    if m:
        word = " ".join(m.group("n").lower().split())
        n = float(_NUMBER_WORDS.get(word, 0) or float(word))
        if n <= 0:
            return None
        if smaller and n > 1:
            return 1 / n
        return n
    return None

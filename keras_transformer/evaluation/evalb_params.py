"""EVALB's parameter files (`.prm`) as data: `EvalbParams`, read by the
scorer (`keras_transformer.evaluation.evalb`, §6.3)."""

import dataclasses
import importlib.resources
import re

# C's isspace in the "C" locale, as EVALB reads bytes.
SPACE_CHARACTERS = " \t\n\v\f\r"
_INT_KEYS = {"DEBUG": "debug", "MAX_ERROR": "max_error", "CUTOFF_LEN": "cutoff_len"}
_LIST_KEYS = {
    "DELETE_LABEL": "delete_labels",
    "DELETE_LABEL_FOR_LENGTH": "delete_labels_for_length",
    "QUOTE_LABEL": "quote_labels",
}
_PAIR_KEYS = {"EQ_LABEL": "eq_labels", "EQ_WORD": "eq_words"}
_KEYS = (*_INT_KEYS, "LABELED", *_LIST_KEYS, *_PAIR_KEYS)


@dataclasses.dataclass(frozen=True)
class EvalbParams:
    """EVALB's parameter-file settings; the defaults are EVALB's without `-p`.

    The paper's setting is `EvalbParams.collins()`, read from the bundled
    `COLLINS.prm`; `EvalbParams.from_file(path)` reads any EVALB `.prm` file.

    Examples:
        >>> params = EvalbParams.parse("LABELED 0\\nDELETE_LABEL TOP\\n")
        >>> params.labeled, params.delete_labels
        (False, ('TOP',))
    """

    debug: int = 0  # DEBUG: EVALB's per-sentence dump; read and ignored
    max_error: int = 10  # MAX_ERROR: EVALB stops at error MAX_ERROR + 2
    cutoff_len: int = 40  # CUTOFF_LEN: the second block, length <= this
    labeled: bool = True  # LABELED 1: brackets match only with equal labels
    delete_labels: tuple[str, ...] = ()  # DELETE_LABEL, one per line
    delete_labels_for_length: tuple[str, ...] = ()  # DELETE_LABEL_FOR_LENGTH
    quote_labels: tuple[str, ...] = ()  # QUOTE_LABEL: tags of the quote repair
    eq_labels: tuple[tuple[str, str], ...] = ()  # EQ_LABEL pairs, both ways
    eq_words: tuple[tuple[str, str], ...] = ()  # EQ_WORD pairs, both ways

    @classmethod
    def parse(cls, text: str, source: str = "<string>") -> "EvalbParams":
        """Reads the text of an EVALB `.prm` file.

        As EVALB: one `KEY value` per line; lines starting with `#` and lines
        under 3 characters are ignored; list and pair keys accumulate, the
        others keep their last value.

        Raises:
            ValueError: an unknown key, a missing or extra value, or a value
                that is not an integer, naming `source`, the line and the key.
        """
        values = {name: [] for name in (*_LIST_KEYS.values(), *_PAIR_KEYS.values())}
        for number, line in enumerate(text.split("\n"), start=1):
            line = line.strip(SPACE_CHARACTERS)
            if line.startswith("#") or len(line) < 3:
                continue
            key, *rest = line.split()
            where = f"{source}, line {number}, key {key}"
            if key not in _KEYS:
                raise ValueError(f"{where}: unknown key. Known: {', '.join(_KEYS)}")
            expected = 2 if key in _PAIR_KEYS else 1
            if len(rest) != expected:
                raise ValueError(
                    f"{where}: expected {expected} value(s). Received: {line!r}"
                )
            if key in _LIST_KEYS:
                values[_LIST_KEYS[key]].append(rest[0])
            elif key in _PAIR_KEYS:
                values[_PAIR_KEYS[key]].append(tuple(rest))
            elif not re.fullmatch(r"-?[0-9]+", rest[0]) or (
                key == "LABELED" and rest[0] not in ("0", "1")
            ):
                wanted = "0 or 1" if key == "LABELED" else "an integer"
                raise ValueError(f"{where}: expected {wanted}. Received: {rest[0]!r}")
            elif key == "LABELED":
                values["labeled"] = rest[0] == "1"
            else:
                values[_INT_KEYS[key]] = int(rest[0])
        return cls(
            **{k: tuple(v) if isinstance(v, list) else v for k, v in values.items()}
        )

    @classmethod
    def from_file(cls, path) -> "EvalbParams":
        """Reads an EVALB `.prm` file (see `parse`)."""
        with open(path, encoding="utf-8", errors="surrogateescape") as file:
            return cls.parse(file.read(), source=str(path))

    @classmethod
    def collins(cls) -> "EvalbParams":
        """The bundled `COLLINS.prm`: standard WSJ parsing evaluation (§6.3)."""
        data = importlib.resources.files("keras_transformer.evaluation") / "data"
        text = (data / "COLLINS.prm").read_text(encoding="utf-8")
        return cls.parse(text, source="COLLINS.prm")

    def same_label(self, first: str, second: str) -> bool:
        """EVALB's label_comp: equal, or an `EQ_LABEL` pair."""
        return first == second or _paired(first, second, self.eq_labels)

    def same_word(self, first: str, second: str) -> bool:
        """EVALB's word_comp: equal, or an `EQ_WORD` pair."""
        return first == second or _paired(first, second, self.eq_words)


def _paired(first, second, pairs):
    return (first, second) in pairs or (second, first) in pairs

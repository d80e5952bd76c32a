"""Input pipelines: parallel text sources, subword tokenizers and tf.data batching.

Imports TensorFlow, tensorflow-text, tensorflow-datasets and sentencepiece only,
nothing else of this project: the command line and the export import it,
never the reverse.

- Sources, each a `tf.data.Dataset` of `(source, target)` strings:
  `load_bundled` (the corpora under `data/`), `read_parallel_files`,
  `read_parallel_tsv`, `load_tfds`.
- Streamed corpora of any size (`parallel_corpus`): `ParallelCorpus` of
  `CorpusPart`s (two line-aligned files or one TSV, plain, .gz or .xz),
  `DatasetCorpus` (a dataset with the same interface); `decode_pairs` skips
  and counts, or refuses, bad lines.
- The sharded token cache of a prepared corpus (`token_cache`):
  `write_token_shard`, `read_token_cache`.
- Tokenizers run in the graph, saved as one-file artefacts with a fingerprint:
  `SentencePieceTokenizer` (BPE) and `WordPieceTokenizer`, both
  `SubwordTokenizer`s, and `SymbolTokenizer`, the whole-token target vocabulary
  of parsing (§6.3); `TOKENIZER_KINDS` / `tokenizer_class` map a kind name to
  its class and `load_tokenizer` reads an artefact of any kind; `sample_texts`
  draws their training texts. Special ids: `special_tokens`.
- Batching as §5.1: `make_dataset` with a `BatchingConfig`, `count_filtered`
  with its `FilterReport`; the transformations themselves in `transforms`;
  `batch_shapes` counts the padded shapes (`BatchShape`) of static mode.
- Constituency trees for parsing (§6.3): the `Tree` type and its bracket
  readers (`trees`: `parse_tree`, `read_trees`, and `read_tree_over_words`
  for a parse over given words); `read_treebank` (WSJ sections of an LDC
  Penn Treebank, `WSJ_SPLITS`, or any bracket files) and
  `load_bundled_trees` (GUM, under `data/gum/`), both normalised
  (`tree_normalisation`: `normalise_tree`) and counted in a `TreebankReport`;
  trees as target sequences and back, repairing invalid output
  (`tree_linearization`: `linearize`, `delinearize`, `RepairCounts`);
  `delinearize_graph` does the same in TensorFlow ops, for the export;
  `TreeCorpus` streams trees as (words, symbols) pairs into the same
  preparation as translation data; `flat_tree` and `right_branching_tree`
  are the baselines.
"""

from pipelines.text import transforms
from pipelines.text.batch_shapes import BatchShape, batch_shapes
from pipelines.text.batching_config import BatchingConfig
from pipelines.text.bucketing import geometric_bucket_lengths, token_budget_batch_sizes
from pipelines.text.bundled import BUNDLED_CORPORA, bundled_corpus_path, load_bundled
from pipelines.text.filter_report import FILTER_REASONS, FilterReport
from pipelines.text.local_files import (
    count_lines,
    read_parallel_files,
    read_parallel_tsv,
)
from pipelines.text.parallel_corpus import (
    ON_BAD_LINE,
    BadLineError,
    CorpusPart,
    DatasetCorpus,
    FileSummary,
    ParallelCorpus,
    decode_pairs,
    file_unchanged,
    open_binary,
    scan_file,
)
from pipelines.text.pipeline import batch_tokenized, count_filtered, make_dataset
from pipelines.text.tfds_source import load_tfds
from pipelines.text.token_cache import read_token_cache, write_token_shard
from pipelines.text.training_texts import sample_texts
from pipelines.tokenizers import special_tokens
from pipelines.tokenizers.encode_sources import encode_sources
from pipelines.tokenizers.marian_tokenizer import MarianTokenizer, marian_vocabulary
from pipelines.tokenizers.sentencepiece_tokenizer import SentencePieceTokenizer
from pipelines.tokenizers.special_tokens import BOS_ID, EOS_ID, PAD_ID, UNK_ID
from pipelines.tokenizers.subword_tokenizer import SubwordTokenizer
from pipelines.tokenizers.symbol_tokenizer import SymbolTokenizer
from pipelines.tokenizers.tokenizer_registry import (
    TOKENIZER_KINDS,
    load_tokenizer,
    tokenizer_class,
)
from pipelines.tokenizers.wordpiece_tokenizer import WordPieceTokenizer
from pipelines.trees.graph_delinearization import delinearize_graph
from pipelines.trees.tree import (
    ROOT_LABEL,
    Tree,
    TreeSyntaxError,
    parse_tree,
    read_tree_over_words,
    read_trees,
)
from pipelines.trees.tree_baselines import (
    baseline_labels,
    flat_tree,
    right_branching_tree,
)
from pipelines.trees.tree_corpus import TreeCorpus
from pipelines.trees.tree_linearization import (
    RepairCounts,
    delinearize,
    linearize,
    retag,
    symbol_classes,
    target_symbols,
)
from pipelines.trees.tree_normalisation import normalise_tree, strip_function_tags
from pipelines.trees.treebank import (
    BUNDLED_TREEBANKS,
    WSJ_SPLITS,
    TreebankError,
    TreebankReport,
    bundled_trees_path,
    load_bundled_trees,
    parse_sections,
    read_treebank,
)

__all__ = [
    "ON_BAD_LINE",
    "BadLineError",
    "CorpusPart",
    "DatasetCorpus",
    "FileSummary",
    "ParallelCorpus",
    "BatchShape",
    "batch_shapes",
    "batch_tokenized",
    "decode_pairs",
    "file_unchanged",
    "open_binary",
    "read_token_cache",
    "scan_file",
    "write_token_shard",
    "BOS_ID",
    "BUNDLED_CORPORA",
    "EOS_ID",
    "FILTER_REASONS",
    "PAD_ID",
    "TOKENIZER_KINDS",
    "UNK_ID",
    "BatchingConfig",
    "FilterReport",
    "MarianTokenizer",
    "SentencePieceTokenizer",
    "SubwordTokenizer",
    "SymbolTokenizer",
    "WordPieceTokenizer",
    "bundled_corpus_path",
    "count_filtered",
    "count_lines",
    "encode_sources",
    "geometric_bucket_lengths",
    "load_bundled",
    "load_tfds",
    "load_tokenizer",
    "make_dataset",
    "marian_vocabulary",
    "read_parallel_files",
    "read_parallel_tsv",
    "sample_texts",
    "special_tokens",
    "token_budget_batch_sizes",
    "tokenizer_class",
    "transforms",
    "BUNDLED_TREEBANKS",
    "WSJ_SPLITS",
    "Tree",
    "TreeSyntaxError",
    "TreebankError",
    "TreebankReport",
    "bundled_trees_path",
    "load_bundled_trees",
    "normalise_tree",
    "strip_function_tags",
    "ROOT_LABEL",
    "RepairCounts",
    "delinearize",
    "linearize",
    "retag",
    "symbol_classes",
    "target_symbols",
    "baseline_labels",
    "TreeCorpus",
    "delinearize_graph",
    "flat_tree",
    "right_branching_tree",
    "parse_sections",
    "parse_tree",
    "read_tree_over_words",
    "read_treebank",
    "read_trees",
]

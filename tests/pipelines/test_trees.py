import pytest

from pipelines.trees.tree import (
    Tree,
    TreeSyntaxError,
    parse_tree,
    read_tree_over_words,
    read_trees,
)

SENTENCE = "(S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .))"


def test_parse_words_preterminals_and_str():
    tree = parse_tree(SENTENCE)
    assert tree.label == "S"
    assert tree.words() == ("The", "cat", "sat", ".")
    assert [p.label for p in tree.preterminals()] == ["DT", "NN", "VBD", "."]
    assert tree.preterminals()[0].is_preterminal and not tree.is_preterminal
    assert str(tree) == SENTENCE
    assert parse_tree(str(tree)) == tree


def test_tree_is_a_value():
    tree = Tree("NP", (Tree("DT", ("the",)), Tree("NN", ("cat",))))
    assert tree == parse_tree("(NP (DT the) (NN cat))")
    assert hash(tree) == hash(parse_tree("(NP (DT the) (NN cat))"))
    assert str(tree) == "(NP (DT the) (NN cat))"


@pytest.mark.parametrize("text", ["( (S (NN x)) )", "((S (NN x)))", "(\n(S\n(NN x)))"])
def test_unlabelled_outer_bracket(text):
    tree = parse_tree(text)
    assert tree.label == ""
    assert tree.children == (Tree("S", (Tree("NN", ("x",)),)),)
    assert str(tree) == "( (S (NN x)))"
    assert parse_tree(str(tree)) == tree


def test_label_on_the_next_line():
    assert parse_tree("(\nS\n(NN\nx))") == parse_tree("(S (NN x))")


def test_brackets_as_words():
    tree = parse_tree("(NP (-LRB- -LRB-) (NN x) (-RRB- -RRB-))")
    assert tree.words() == ("-LRB-", "x", "-RRB-")
    assert str(tree) == "(NP (-LRB- -LRB-) (NN x) (-RRB- -RRB-))"


def test_multi_line_trees_with_their_lines():
    text = (
        "( (S \n"
        "    (NP-SBJ (NNP Pierre) )\n"
        "    (VP (VBD left) )))\n"
        "\n"
        "((S (NP (PRP It)) (VP (VBD rained))))\n"
        "(ROOT (FRAG (NN x)))(ROOT (FRAG (NN y)))\n"
    )
    read = list(read_trees(text, "f.mrg"))
    assert [line for line, _ in read] == [1, 5, 6, 6]
    assert [tree.words() for _, tree in read] == [
        ("Pierre", "left"),
        ("It", "rained"),
        ("x",),
        ("y",),
    ]


@pytest.mark.parametrize(
    "text, message",
    [
        ("(S (NN x)))", r"Unbalanced '\)' in f.mrg at line 1"),
        ("(S (NN x))\n\n(S (NN y)", r"Unbalanced '\(' in f.mrg: .* line 3"),
        ("(S\n (NN x)\n word)", "word outside a preterminal in f.mrg at line 3"),
        ("(S (NN x)\n (NP y (NN z)))", "word outside a preterminal in f.mrg at line 2"),
        ("( (NN x) word)", "line 1. Received: 'word' under an unlabelled bracket"),
        ("(S (NN a\n b))", "line 2. Received: 'b' under NN"),
        ("(S (NN a\n (NN b)))", "line 2. Received: 'a' under NN"),
        ("(S (NN x))\nstray", "Text outside a tree in f.mrg at line 2"),
        ("(S (NN x) ())", "Empty constituent in f.mrg at line 1"),
        ("(S (NN x)\n ( word))", "Empty constituent in f.mrg at line 2"),
    ],
)
def test_malformed_brackets_name_source_and_line(text, message):
    with pytest.raises(TreeSyntaxError, match=message):
        list(read_trees(text, "f.mrg"))


def test_syntax_error_is_a_value_error():
    assert issubclass(TreeSyntaxError, ValueError)


@pytest.mark.parametrize("text", ["", "(S (NN x)) (S (NN y))"])
def test_parse_tree_wants_exactly_one_tree(text):
    with pytest.raises(TreeSyntaxError, match="Expected one tree"):
        parse_tree(text)


def test_a_tree_reads_back_over_words_that_hold_brackets():
    words = ["b\xe4d", "(x)", "y)", "."]
    tree = Tree(
        "TOP",
        (
            Tree(
                "S",
                (
                    Tree("NP", (Tree("XX", (words[0],)),)),
                    Tree("XX", (words[1],)),
                    Tree("XX", (words[2],)),
                ),
            ),
            Tree("XX", (words[3],)),
        ),
    )
    assert read_tree_over_words(str(tree), words) == tree
    with pytest.raises(TreeSyntaxError):
        parse_tree(str(tree))  # brackets read as structure
    assert read_tree_over_words("(TOP )", []) == Tree("TOP", ())
    deep = "(TOP " + "(S " * 3000 + "(XX a)" + ")" * 3000 + ")"
    assert read_tree_over_words(deep, ["a"]).words() == ("a",)
    for text, words, message in (
        ("(TOP (XX a)", ["a"], "Not one tree"),
        ("(TOP (XX a)) (TOP )", ["a"], "Not one tree"),
        ("(TOP (XX a))", ["a", "b"], "not the sentence's 2 words"),
    ):
        with pytest.raises(TreeSyntaxError, match=message):
            read_tree_over_words(text, words)

"""How a writer restates documentation, read by the sentence-support check (`research_engine.support`,
`support_negation`, `support_words`): a restriction in other words, a closed compound, the question's
subject named, a figure written as a word, a name spelled one part wrong, a concession that spans every case.
Each claim is a sentence of real Debian documentation (r-doc-html, varnish-doc, wireshark-doc, bind9-doc,
maxima-doc, libpam-doc); bench/results/faithfulness-s14.md measures each reading on every set."""

from __future__ import annotations

from research_engine import support

CLAIMS = {
    # r-doc-html: R-ints.html, R-data.html
    "CLM-01": "Arguments are not evaluated until needed.",
    "CLM-02": 'In some locales the comma is used as the decimal point (set this in write.table by dec = ",") '
    "and there CSV files use the semicolon as the field separator: use write.csv2 for appropriate defaults.",
    # varnish-doc: users-guide/vcl-backends.html
    "CLM-03": "In this example Varnish will check the health of each backend every 5 seconds, timing out "
    "after 1 second.",
    # wireshark-doc: wsug_html_chunked/ChAdvNameResolutionSection.html
    "CLM-04": "However, if the name resolution information should change while Wireshark is running, "
    "Wireshark won’t notice a change in the name resolution information once it gets cached.",
    # bind9-doc: arm/reference.html, arm/chapter6.html
    "CLM-05": "Keys may also be specified in the also-notify statement of a primary or secondary zone, "
    "causing NOTIFY messages to be signed using the specified key.",
    "CLM-06": "Removing a member zone from a secondary server requires only deleting the member zone's entry "
    "in the catalog zone.",
    # maxima-doc: maxima_77.html (integrate), maxima_54.html (plot options)
    "CLM-07": "a need not be less than b. If b is equal to a, integrate returns zero.",
    "CLM-08": "Specifies the string that will label the first axis; if this option is not used, that label "
    "will be the name of the independent variable.",
    "CLM-09": "solve ([eqn_1, ..., eqn_n], [x_1, ..., x_n]) solves a system of simultaneous (linear or "
    "non-linear) polynomial equations by calling linsolve or algsys.",
    # libpam-doc: sag-pam_unix.html, sag-pam_env.html
    "CLM-10": "This is the standard Unix authentication module. It uses standard calls from the system's "
    "libraries to retrieve and set account information as well as authentication.",
    "CLM-11": "The pam_env PAM module allows the (un)setting of environment variables.",
    # postgresql-doc-15: plpgsql-control-structures.html
    "CLM-12": "With PL/pgSQL's control structures, you can manipulate PostgreSQL data in a very flexible and "
    "powerful way.",
}
QUESTIONS = [
    "What does the pam_unix module do?",
    "What does the shared_buffers setting control in PostgreSQL?",
]


def judged(text: str) -> list[support.Sentence]:
    judge = support.Judge(
        {c: {"id": c, "text": t} for c, t in CLAIMS.items()}, " ".join(QUESTIONS), QUESTIONS
    )
    return judge.block(text, 1)


def passes(text: str) -> bool:
    return all(s.ok for s in judged(text))


def faults(text: str) -> set[str]:
    return {f.kind for s in judged(text) for f in s.faults}


def test_only_when_is_not_until():
    assert passes("R evaluates arguments only when they are needed [CLM-01].")
    assert not passes("R evaluates arguments only when the function returns [CLM-01].")


def test_nothing_more_than_is_only():
    assert passes(
        "Taking a member zone off a secondary server needs nothing more than deleting its entry in the "
        "catalog zone [CLM-06]."
    )


def test_a_negation_over_the_claims_negated_clause_is_the_same_negation():
    assert passes(
        "If name resolution data changes while Wireshark runs, the program won't detect it once the "
        "information is cached [CLM-04]."
    )
    assert not passes("Wireshark notices a change in name resolution information once it is cached [CLM-04].")


def test_without_is_a_presence_verb_negated():
    assert passes(
        "Without this option, the first axis is labelled with the independent variable's name [CLM-08]."
    )


def test_a_closed_compound_is_the_claims_open_one():
    assert passes(
        "Varnish checks each backend's health every 5 seconds, with a timeout of 1 second [CLM-03]."
    )


def test_un_in_brackets_is_both_words():
    assert passes("pam_env sets and unsets environment variables [CLM-11].")


def test_the_questions_subject_named_where_the_claim_says_this_module():
    assert passes(
        "pam_unix is the standard Unix authentication module, and it uses the system libraries' standard "
        "calls [CLM-10]."
    )
    # the claim is about something else entirely: naming the question's setting is a name it does not hold
    assert "name" in faults(
        "The shared_buffers setting lets you manipulate PostgreSQL data in a very flexible way [CLM-12]."
    )


def test_a_dotted_names_last_figure_is_no_footnote():
    assert "name" in faults(
        "Where the comma is the decimal point, CSV files use a semicolon separator and write.csv gives the "
        "defaults [CLM-02]."
    )
    assert passes("Where the comma is the decimal point, write.csv2 gives appropriate defaults [CLM-02].")


def test_a_hyphenated_name_wrong_in_one_part_or_coined():
    assert "name" in faults(
        "Keys may also be given in the allow-notify statement of a primary zone [CLM-05]."
    )
    assert "name" in faults("Keys may also be given in the keyfile-notify statement of a zone [CLM-05].")
    assert passes("Keys may also be specified in the also-notify statement of a secondary zone [CLM-05].")


def test_zero_and_one_are_figures_where_the_claim_writes_one_after_the_same_word():
    assert "number" in faults("If b equals a, integrate returns one [CLM-07].")
    assert passes("If b equals a, integrate returns 0 [CLM-07].")
    assert passes("Given equal limits, integrate returns zero [CLM-07].")


def test_a_concession_over_every_case_is_an_overclaim():
    assert "overclaim" in faults(
        "solve solves any system of polynomial equations, whatever its size, by calling linsolve or algsys "
        "[CLM-09]."
    )
    assert "overclaim" in faults(
        "solve solves systems of polynomial equations no matter how many there are [CLM-09]."
    )

"""More of the sentence-support check's readings (`research_engine.support`, `support_negation`,
`support_words`, `support_opposites`): how documentation words a value, a negation, a restriction, a link, a
footnote or a name, and how a writer restates it. Each claim is a sentence of real Debian documentation
(python-django-doc, postgresql-doc-15, python-flask-doc), each sentence one a writer could put over it;
bench/results/faithfulness-s6.md measures each reading on the held-out sets."""

from __future__ import annotations

from research_engine import support, support_words

CLAIMS = {
    # python-django-doc: topics/cache.html, releases/1.7.html
    "CLM-01": "The fragment is cached forever if timeout is None.",
    "CLM-02": "Previously, it was only possible to pass timeout=None to the cache backend’s set() method.",
    # postgresql-doc-15: xfunc-sql.html; python-django-doc: topics/checks.html
    "CLM-03": "The extra parentheses are needed to keep the parser from getting confused.",
    "CLM-04": "If databases is None, the check must not use any database connections.",
    # python-django-doc: releases/0.95.html, releases/1.1.html, topics/http/sessions.html
    "CLM-05": "If you don’t want to use these applications, you no longer have to install their database "
    "tables.",
    "CLM-06": "This defaults to True, meaning that Django will create the appropriate database tables in "
    "syncdb and remove them as part of the reset command.",
    "CLM-07": "An attacker in possession of the SECRET_KEY can not only generate falsified session data, "
    "which your site will trust, but also remotely execute arbitrary code, as the data is serialized using "
    "pickle.",
    # postgresql-doc-15: sql-createtable.html, extend-extensions.html; python-django-doc: topics/checks.html
    "CLM-08": "SQL:1999-style inheritance is not yet supported by PostgreSQL.",
    "CLM-09": "PostgreSQL does not currently support extension scripts issuing CREATE POLICY or SECURITY "
    "LABEL statements.",
    "CLM-10": "These checks will only be run if the check --deploy option is used.",
    # python-django-doc: releases/1.4.html, releases/1.2.html
    "CLM-11": "Time zone support is enabled by default in new projects created with startproject.",
    "CLM-12": "This behavior is configurable, and allows both variables and larger template constructs to be "
    "marked as safe (requiring no escaping) or unsafe (requiring escaping).",
    # python-django-doc: releases/1.10.html, ref/models/relations.html
    "CLM-13": "The unordered_list filter no longer supports old style lists.",
    "CLM-14": "If clear=True, the clear() method is called instead and the whole set is added at once.",
}
QUESTIONS = [
    "How does Django cache template fragments?",
    "What changed in the last 5 years regarding caching?",
]


def passes(text: str, claims: dict[str, str] = CLAIMS) -> bool:
    judge = support.Judge(
        {c: {"id": c, "text": t} for c, t in claims.items()}, " ".join(QUESTIONS), QUESTIONS
    )
    return all(s.ok for s in judge.block(text, 1))


def test_none_written_as_a_value_is_no_negation():
    assert passes("With a timeout of None the fragment is cached forever [CLM-01].")
    assert passes("Before, only the set() method of the cache backend accepted timeout=None [CLM-02].")
    assert not passes("The fragment is never cached if timeout is None [CLM-01].")


def test_keep_or_stop_from_negates_what_the_from_leads_to():
    assert passes("The extra parentheses are needed for the parser not to get confused [CLM-03].")
    assert passes("If databases is None, the check is stopped from using database connections [CLM-04].")
    assert not passes("If databases is None, the check uses database connections [CLM-04].")


def test_unless_is_if_not():
    assert passes(
        "Unless you want to use these applications, you no longer have to install their tables [CLM-05]."
    )
    assert not passes("Unless you want to use these applications, you have to install their tables [CLM-05].")


def test_meaning_and_a_clause_after_as_are_causal_links_a_sentence_may_state():
    assert passes(
        "Because this defaults to True, Django creates the appropriate database tables in syncdb [CLM-06]."
    )
    assert passes(
        "Because the data is serialized using pickle, an attacker with the SECRET_KEY can remotely execute "
        "arbitrary code [CLM-07]."
    )
    assert not passes(
        "Because time zone support is enabled by default, startproject creates new projects [CLM-11]."
    )


def test_closed_class_words_carry_no_content():
    assert passes(
        "Besides falsifying session data, which your site would trust, an attacker with the SECRET_KEY can "
        "also remotely execute arbitrary code [CLM-07]."
    )
    words = support_words.content_words(
        support_words.tokenize("Though it is odd, something besides X"), set()
    )
    assert words == ["odd"]


def test_a_questions_figure_backs_only_what_it_counts():
    assert passes("Over the last 5 years, the fragment is cached forever if timeout is None [CLM-01].")
    assert not passes("The fragment is cached for five minutes if timeout is None [CLM-01].")


def test_a_negation_reaches_past_currently_yet_and_possible():
    assert not passes("PostgreSQL supports SQL:1999-style inheritance [CLM-08].")
    assert not passes("PostgreSQL supports extension scripts issuing CREATE POLICY statements [CLM-09].")
    assert passes("PostgreSQL does not support SQL:1999-style inheritance yet [CLM-08].")


def test_only_agrees_with_the_claims_only_read_with_its_condition():
    assert passes("These checks run only when the check --deploy option is used [CLM-10].")
    # a restriction no claim makes is the sentence's own
    assert not passes(
        "Time zone support is enabled by default only in projects created with startproject [CLM-11]."
    )


def test_an_able_adjective_carries_its_verb():
    assert passes("Developers can configure this behavior to mark variables as safe or unsafe [CLM-12].")
    assert support_words.carried("customize", support_words.word_stems(["customizable"]))
    assert support_words.carried("customizable", support_words.word_stems(["customize"]))


def test_still_against_no_longer():
    judge = support.Judge({"CLM-13": {"id": "CLM-13", "text": CLAIMS["CLM-13"]}}, "")
    (judged,) = judge.block("The unordered_list filter still supports old style lists [CLM-13].", 1)
    assert "still (the claim: no_longer)" in judged.message()
    assert passes("The unordered_list filter does not support old style lists any more [CLM-13].")


def test_a_degree_adverb_is_not_backed_by_a_quantifier():
    assert passes("With clear=True, clear() is called instead and the whole set is added at once [CLM-14].")
    assert not passes("The whole set is completely added at once when clear=True [CLM-14].")


def test_a_command_line_option_in_capitals_is_code():
    assert passes("These checks only run when the check command gets the --deploy option [CLM-10].")
    assert not passes("These checks only run when the check command gets the -T option [CLM-10].")


# The seventh session's readings (bench/results/faithfulness-s7.md), over real documentation sentences:
# python-django-doc (templates' security, ref/contrib/admin), postgresql-doc-15 (catalogs, extend),
# python-sqlalchemy-doc (orm/self_referential) and, for the figure, octave-doc (Broadcasting).
READINGS_7 = {
    "CLM-01": "Using Django templates protects you against the majority of XSS attacks.",
    "CLM-02": "Sorting on multiple columns by clicking on headers is designed to mimic the behavior of "
    "desktop GUIs.",
    "CLM-03": "PostgreSQL is designed to be easily extensible.",
    "CLM-04": "PostgreSQL is easily extensible.",
    "CLM-05": "However, to use eager loading with a self-referential relationship, SQLAlchemy needs to be "
    "told how many levels deep it should join and/or query; otherwise the eager load will not take place at "
    "all.",
    "CLM-06": "The eager load will not take place at all.",
    "CLM-07": "Null keys are never passed to this function. Other keys are cached.",
    "CLM-08": "A special case of broadcasting that may be familiar is when all dimensions of the array being "
    "broadcast are 1, i.e., the array is a scalar.",
}


def passes_7(text: str) -> bool:
    return passes(text, READINGS_7)


def test_the_majority_of_is_most():
    assert passes_7("Using Django templates protects you against most XSS attacks [CLM-01].")
    assert not passes_7("Using Django templates protects you against all XSS attacks [CLM-01].")


def test_a_british_spelling_is_the_american_one():
    assert support_words.stem("behaviour") == support_words.stem("behavior")
    assert support_words.stem("initialised") == support_words.stem("initialized")
    assert support_words.stem("catalogue") == support_words.stem("catalog")
    assert support_words.stem("hour") != support_words.stem("hor")  # a rule WordNet does not list is none
    assert passes_7(
        "Sorting on multiple columns by clicking on headers mimics the behaviour of desktop GUIs [CLM-02]."
    )


def test_a_purpose_the_claim_states_is_a_causal_link():
    assert passes_7("PostgreSQL was designed so that it is easily extensible [CLM-03].")
    assert not passes_7("PostgreSQL was made so that it is easily extensible [CLM-04].")


def test_a_negation_otherwise_opens_says_what_follows_when_the_condition_fails():
    assert passes_7(
        "For eager loading with a self-referential relationship, SQLAlchemy is told how many levels deep to "
        "join, so that the eager load takes place [CLM-05]."
    )
    assert not passes_7("The eager load takes place [CLM-06].")


def test_a_lowercase_word_no_dictionary_lists_is_a_name():
    assert not passes_7("Using Django templates protects you against the majority of xsrf attacks [CLM-01].")
    # closed-class words and a comparative are English words, though WordNet lists neither
    assert support_words.dictionary_word("whichever") and support_words.dictionary_word("onto")
    assert support_words.dictionary_word("newer") and support_words.dictionary_word("settable")
    assert not support_words.dictionary_word("paperorientation")


def test_negations_of_one_clause_in_another_voice_agree():
    assert passes_7("This function is never given null keys [CLM-07].")
    assert not passes_7("Other keys are never cached [CLM-07].")


def test_a_figure_is_not_exchanged_with_a_word():
    assert passes_7(
        "Broadcasting a scalar, where every dimension of the broadcast array is 1, is the familiar special "
        "case [CLM-08]."
    )

"""The extractive plan's question shapes: items given as examples, what "What does X <verb>?" asks of X, and
sub-questions that stay sentences (`engine.extractive.plan`, `facets`, `enumerations`, `asked_of`)."""

from __future__ import annotations

import pytest

from research_engine.engine.extractive.asked_of import asked_of
from research_engine.engine.extractive.enumerations import enumeration
from research_engine.engine.extractive.plan import plan_of


def _plan(objective: str) -> list[str]:
    return [q.text for q in plan_of({"objective": objective, "claim_types": ["technical"], "recency": "5y"})]


@pytest.mark.parametrize(
    "objective",
    [
        "Which Unicode characters, including tabs, spaces and newlines, count as whitespace in Python?",
        "How can I find files by type (e.g. symlinks, sockets or FIFOs) with find?",
        "Why do shell builtins like cd, export and alias not work in a Makefile recipe?",
        "How do I restart services such as cron, sshd or nginx after an upgrade?",
        "What happens to open descriptors, for example sockets, pipes and files, when a process forks?",
    ],
)
def test_items_given_as_examples_stay_in_the_question_they_illustrate(objective):
    plan = _plan(objective)
    assert plan[0] == objective  # asked as written, the examples in it
    assert not [q for q in plan if q.startswith(("What is ", "What are "))]  # none asked about on its own
    assert enumeration(objective.rstrip("?")) is None


def test_a_choice_among_what_the_examples_illustrate_asks_of_each_of_them():
    plan = _plan("How do I choose between compression formats such as gzip, bzip2 and xz?")
    assert plan[:3] == ["When should I use gzip?", "When should I use bzip2?", "When should I use xz?"]
    plan = _plan("What are the differences between image formats like PNG, JPEG and WebP?")
    assert plan[:3] == ["What is PNG?", "What is JPEG?", "What is WebP?"]  # never "What is like PNG?"


@pytest.mark.parametrize(
    ("objective", "items"),
    [
        ("What are the differences between GET, POST and PUT in HTTP?", ["GET", "POST", "PUT"]),
        ("How do gzip and xz compare?", ["gzip", "xz"]),
    ],
)
def test_an_enumeration_that_is_the_question_own_subject_is_asked_item_by_item(objective, items):
    plan = _plan(objective)
    assert [q.split()[2].rstrip("?") for q in plan[: len(items)]] == items


def test_items_each_with_an_article_keep_every_word_of_their_noun_phrase():
    # "a remote tracking branch and a local branch": the first item is whole too, never "tracking branch".
    items, _ = enumeration("the difference between a remote tracking branch and a local branch in Git")
    assert items == ["remote tracking branch", "local branch"]
    plan = _plan(
        "What is the difference between a read only transaction and a deferred transaction in SQLite?"
    )
    assert plan[:2] == [
        "What is a read only transaction in SQLite?",
        "What is a deferred transaction in SQLite?",
    ]


def test_examples_after_an_enumeration_leave_the_enumeration_its_own_items():
    plan = _plan(
        "What are the differences between Apache, nginx and Caddy for serving files like images and fonts?"
    )
    assert plan[0] == "When should Apache be used for serving files like images and fonts?"
    assert not [q for q in plan if q.startswith("What are images")]


@pytest.mark.parametrize(
    ("objective", "follow_up"),
    [
        (
            "What does the ENOSPC error mean and how do I fix it on Linux?",
            "How do I fix the ENOSPC error on Linux?",
        ),
        ("What does SIGPIPE mean, and how do I handle it?", "How do I handle SIGPIPE?"),
        (
            "What does the tar option -z stand for, and when do I need it?",
            "When do I need the tar option -z?",
        ),
        (
            "What does the rsync message 'some files vanished' mean, and how do I silence it?",
            "How do I silence the rsync message 'some files vanished'?",
        ),
        (
            "What does the sticky bit do on a directory, and how do I set it?",
            "How do I set the sticky bit on a directory?",
        ),
        (
            "What does Django's CSRF middleware do, and how do I disable it for one view?",
            "How do I disable Django's CSRF middleware for one view?",
        ),
        (
            "What did Python 2's print statement look like, and what replaced it?",
            "What replaced Python 2's print statement?",
        ),
    ],
)
def test_a_pronoun_after_what_does_x_mean_or_do_stands_for_x_never_x_and_the_verb(objective, follow_up):
    assert _plan(objective)[1] == follow_up


def test_an_it_that_is_all_that_is_done_stands_for_what_x_does_and_one_said_more_of_for_x():
    changed = _plan("What does the kernel do when memory runs out, and how do I change it?")
    assert changed[1] == "How do I change what the kernel does when memory runs out?"
    stopped = _plan(
        "What does the kernel do when memory runs out, and how do I stop it from killing my database?"
    )
    assert stopped[1] == "How do I stop the kernel from killing my database?"


def test_them_after_what_do_x_mean_is_all_of_x_not_its_last_plural():
    plan = _plan("What do the colors in ls output mean and how do I turn them off?")
    assert plan[1] == "How do I turn the colors in ls output off?"


def test_angle_questions_name_x_without_the_verb_asked_of_it():
    plan = _plan("What does the exit status 141 mean and how do I avoid it?")
    assert plan == [
        "What does the exit status 141 mean?",
        "How do I avoid the exit status 141?",
    ]
    assert _plan("What does a .gitattributes file look like, and should I commit it?")[-1] == (
        "What are the limitations and drawbacks of a .gitattributes file?"
    )


def test_what_are_x_is_asked_of_x_not_read_as_who_did_something():
    plan = _plan("What are build artifacts in Maven, and where does Maven store them?")
    assert plan[1] == "Where does Maven store build artifacts?"
    assert "that" not in plan[-1]  # never "the are build that artifacts"


def test_the_verb_asked_with_is_read_where_it_ends_the_question_or_a_preposition_follows():
    scoped = asked_of("the EXPLAIN command return in PostgreSQL")
    assert scoped is not None and scoped.thing == "the EXPLAIN command in PostgreSQL" and scoped.bare
    conditioned = asked_of("the tool do when the output is empty")
    assert conditioned is not None and conditioned.thing == "the tool" and not conditioned.bare
    quoted = asked_of("the error 'cannot do in this state' mean")  # the quotation's "do" is not asked with
    assert (
        quoted is not None
        and quoted.subject == "the error 'cannot do in this state'"
        and quoted.verb == "mean"
    )
    assert asked_of("the print function") is None  # "print" names the function
    named = asked_of("the SHOW statement return")  # "SHOW" names a statement
    assert named is not None and named.subject == "the SHOW statement"


def test_an_article_before_a_lists_first_item_goes_with_each_item():
    assert _plan("What are the differences between a list, tuple and set in Python?")[:3] == [
        "What is a list in Python?",
        "What is a tuple in Python?",
        "What is a set in Python?",
    ]
    assert _plan("What is the difference between an index, update and user in Rails?")[:3] == [
        "What is an index in Rails?",
        "What is an update in Rails?",
        "What is a user in Rails?",
    ]


def _plan_with_defaults(objective: str) -> list[str]:
    """Planned with the claim types a brief defaults to: factual and quantitative."""
    return [q.text for q in plan_of({"objective": objective, "claim_types": ["factual", "quantitative"]})]


@pytest.mark.parametrize(
    ("objective", "quoted"),
    [
        (
            "rsync stops with 'protocol version mismatch: is your shell clean?'. How do I find the cause?",
            "'protocol version mismatch: is your shell clean?'",
        ),
        (
            'git push prints "error: failed to push some refs; hint: fetch first". What does it mean?',
            '"error: failed to push some refs; hint: fetch first"',
        ),
        (
            "My cron job logs 'cannot open display: :0. Aborting, and retrying later'. Why does it fail?",
            "'cannot open display: :0. Aborting, and retrying later'",
        ),
        ("Why does `make -k; echo done?` keep going after an error?", "`make -k; echo done?`"),
        ("Why does $? print 1 after grep finds nothing in my script?", "$? print 1 after grep finds nothing"),
        ("What does $! hold in a shell script?", "$! hold in a shell script"),
    ],
)
def test_a_quotation_stays_as_written_in_every_sub_question(objective, quoted):
    plan = _plan(objective)
    assert plan and all(quoted in q for q in plan)


def test_a_sentence_ending_in_a_quotation_sets_the_situation_of_an_unmarked_question_after_it():
    plan = _plan("cmake stops with 'Could not find a package configuration file.' how do i make it find zlib")
    situation = "cmake stops with 'Could not find a package configuration file.'"
    assert plan == [f"How do i make it find zlib, given that {situation}?"]
    assert not [q for q in plan if q.startswith("What is known about")]


def test_a_comparison_of_two_things_keeps_the_comparison_and_names_each_whole():
    plan = _plan("What are the incompatibilities between GNU awk and BSD awk?")
    assert plan == [
        "What is GNU awk?",
        "What is BSD awk?",
        "What are the incompatibilities between GNU awk and BSD awk?",
    ]
    assert _plan("What are the differences between zsh and POSIX sh?")[1] == "What is POSIX sh?"
    assert _plan("What is the relationship between json and jsonb data types in PostgreSQL?")[:2] == [
        "What is json in PostgreSQL?",
        "What is jsonb in PostgreSQL?",
    ]


def test_a_versus_topic_before_the_question_is_what_the_question_compares():
    plan = _plan("GNU grep vs BSD grep: which flags behave differently?")
    assert "Which flags behave differently between GNU grep and BSD grep?" in plan
    assert not [q for q in plan if "given that" in q]
    plan = _plan("Podman versus Docker: which one should I use for rootless containers?")
    assert "Which one should I use between Podman and Docker for rootless containers?" in plan


def test_its_of_a_long_antecedent_is_said_with_of():
    plan = _plan("Which option limits the number of open files in nginx, and what is its default value?")
    assert plan[1] == "What is the default value of the option that limits the number of open files in nginx?"
    assert _plan("What is Redis's maxmemory setting, and what is its default value?")[1] == (
        "What is Redis's maxmemory setting's default value?"  # a short name keeps its "'s"
    )


def test_the_default_claim_types_add_no_time_angle_to_a_how_to_or_a_comparison():
    for objective in (
        "How do I write a loop in GNU make that iterates over each word of a variable?",
        "What are the incompatibilities between GNU awk and BSD awk?",
    ):
        assert not [q for q in _plan_with_defaults(objective) if q.startswith("What changed")]
    # A figure has a trend.
    assert _plan_with_defaults("What is the population of Norway?")[-1].startswith("What changed")


def test_a_situation_opening_with_when_something_happens_is_a_statement_not_a_question():
    plan = _plan("When I run make, gcc prints 'undefined reference to main'. How do I link the right file?")
    assert plan == [
        "How do I link the right file, given that when I run make, gcc prints 'undefined reference to main'?"
    ]
    asked = "When does cron run @reboot jobs"
    assert _plan(f"{asked}, and in which shell?")[0] == f"{asked}?"  # a question of when stays one


def test_a_relative_that_is_no_demonstrative_pointing_back():
    # "programs that link" after "When I link ...": "that" opens a relative clause, it points back to nothing
    plan = _plan(
        "When I link a dependency to my library with target_link_libraries, should I say PRIVATE or PUBLIC? "
        "What actually changes for programs that link against my library?"
    )
    assert "What actually changes for programs that link against my library?" in plan
    assert _plan("When does nginx proxy cache store a response, and when is that cache purged?")[1] == (
        "When is nginx proxy cache purged?"
    )


def test_a_follow_ups_actor_carries_the_situation_once():
    plan = _plan(
        "My editor uses clangd and wants a compile_commands.json file. How do I get CMake to write one, and "
        "will it work with the Visual Studio generator too?"
    )
    assert all(q.count("given that") == 1 for q in plan)


def test_what_a_choice_changes_asks_no_time_angle():
    plan = [
        q.text
        for q in plan_of(
            {
                "objective": "Should I link with PRIVATE or PUBLIC, and what actually changes for programs "
                "that link against my library?",
                "claim_types": ["technical", "factual"],
            }
        )
    ]
    assert not [q for q in plan if q.startswith("What changed")]


def test_a_how_to_is_weighed_as_the_askers_doing_not_quoted():
    from research_engine.engine.extractive.asked_of import gerund
    from research_engine.engine.extractive.plan import plan_of

    assert [
        gerund(v) for v in ("keep", "make", "set", "stop", "tie", "see", "fix", "show", "open", "use")
    ] == [
        "keeping",
        "making",
        "setting",
        "stopping",
        "tying",
        "seeing",
        "fixing",
        "showing",
        "opening",
        "using",
    ]
    # A how-to whose topic is no noun phrase ("..., ideally offline") is weighed as what the asker does.
    texts = [
        p.text
        for p in plan_of(
            {"objective": "How do I keep a backup of my signing keys somewhere safe, ideally offline?"}
        )
    ]
    weighed = "What are the limitations and drawbacks of keeping a backup of my signing keys somewhere safe"
    assert f"{weighed}, ideally offline?" in texts
    assert not any('"' in t for t in texts)

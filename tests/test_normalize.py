from twinbench.normalize import normalize_option


def test_published_steps() -> None:
    # NFKC turns the full-width letters and the ligature into plain ones; casefold lowers ß to ss.
    assert normalize_option("  Ｏnce   DAILY. ") == "once daily"
    assert normalize_option("ﬁle—name!") == "filename"
    assert normalize_option("Straße") == "strasse"
    assert normalize_option("once\tdaily") == normalize_option("Once daily.")


def test_distinct_options_stay_distinct() -> None:
    assert normalize_option("once daily") != normalize_option("twice daily")
    assert normalize_option("£5") == "£5"  # a currency sign is a symbol, not punctuation


def test_punctuation_between_digits_is_kept() -> None:
    # found in ArcticAbstain: a distractor "19 s" must not equal the gold answer "1.9 s"
    assert normalize_option("1.9 s") != normalize_option("19 s")
    assert normalize_option("1,200") == "1,200"
    assert normalize_option("-0.5 °C") != normalize_option("0.5 °C")
    assert normalize_option("well-known") == "wellknown"
    assert normalize_option("(18%).") == "18"  # % is punctuation (Po); only digit-digit stays

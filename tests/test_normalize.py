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

"""The 15 XNLI languages: the script each is written in and the item instructions in it.

Data, not logic. `SCRIPT` is the first word of the Unicode name of the language's letters
(CJK for Han, as in `twinbench.generators.scripts`); `INSTRUCTIONS` is "Which statement is
true according to the text?" in the language.
"""

from __future__ import annotations

from typing import Final

#: language -> (script, instructions)
XNLI_LANGUAGES: Final[dict[str, tuple[str, str]]] = {
    "ar": ("ARABIC", "أي عبارة صحيحة وفقًا للنص؟"),
    "bg": ("CYRILLIC", "Кое твърдение е вярно според текста?"),
    "de": ("LATIN", "Welche Aussage ist laut dem Text wahr?"),
    "el": ("GREEK", "Ποια πρόταση είναι αληθής σύμφωνα με το κείμενο;"),
    "en": ("LATIN", "Which statement is true according to the text?"),
    "es": ("LATIN", "¿Qué afirmación es verdadera según el texto?"),
    "fr": ("LATIN", "Quelle affirmation est vraie selon le texte ?"),
    "hi": ("DEVANAGARI", "पाठ के अनुसार कौन-सा कथन सत्य है?"),
    "ru": ("CYRILLIC", "Какое утверждение верно согласно тексту?"),
    "sw": ("LATIN", "Ni kauli ipi iliyo kweli kulingana na maandishi?"),
    "th": ("THAI", "ข้อความใดเป็นจริงตามเนื้อหา"),
    "tr": ("LATIN", "Metne göre hangi ifade doğrudur?"),
    "ur": ("ARABIC", "متن کے مطابق کون سا بیان درست ہے؟"),
    "vi": ("LATIN", "Theo văn bản, phát biểu nào là đúng?"),
    "zh": ("CJK", "根据文本，哪个陈述是正确的？"),
}

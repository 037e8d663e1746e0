"""Forms: field validation here, domain rules in the use cases (their errors land on fields).

Every form is a :class:`~hisadmin.core.inputs.CheckedForm`: text refuses control and
text-direction characters, dates stay within 1900–2100, as in the API."""

from __future__ import annotations

from typing import Any

from django import forms

from hisadmin.core.inputs import CheckedForm, past_date_validator
from patients.domain.records import (
    DISCHARGE_NOTE_MAX,
    DISPOSITION_LABELS,
    NAME_MAX,
    SEX_LABELS,
    SEXES,
)

BIRTH_DATE_HELP = "Pick it from the calendar, or type it in the order the box shows."
BIRTH_DATE_INVALID = "Enter a real date: pick it from the calendar, or type it in the order " \
                     "the box shows."


NAME_TOO_LONG = ("At most %(limit_value)d characters: this one has %(show_value)d. "
                 "Shorten it; nothing was saved.")


class NameField(forms.CharField):
    """A given or family name: at most NAME_MAX characters, said under the box and checked
    here, never by the browser's ``maxlength`` (which cuts a pasted name without a word):
    a longer name is refused with a form error that keeps what was typed."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(max_length=NAME_MAX, help_text=f"At most {NAME_MAX} characters.",
                         error_messages={"max_length": NAME_TOO_LONG}, **kwargs)

    def widget_attrs(self, widget: forms.Widget) -> dict[str, Any]:
        attrs = super().widget_attrs(widget)
        attrs.pop("maxlength", None)
        return attrs


class RegisterForm(CheckedForm):
    given_name = NameField()
    family_name = NameField()
    # The browser's date picker shows the date in the user's own format (02/03/1955 or
    # 03.02.1955) and sends it as YYYY-MM-DD, so the help speaks of the picker, not the wire.
    birth_date = forms.DateField(help_text=BIRTH_DATE_HELP,
                                 widget=forms.DateInput(attrs={"type": "date"}),
                                 validators=[past_date_validator],
                                 error_messages={"invalid": BIRTH_DATE_INVALID})
    sex = forms.ChoiceField(choices=[(s, SEX_LABELS[s]) for s in SEXES], initial="unknown")
    mrn = forms.CharField(max_length=20, required=False, label="MRN",
                          help_text="Leave empty to generate one.")
    # Shown (as a checkbox) only once possible duplicates are on the page; it counts only for
    # the name and birth date they were found for (``checked_for``), never for changed ones.
    confirm_not_duplicate = forms.BooleanField(required=False, widget=forms.HiddenInput,
                                               label="This is not the same person")
    checked_for = forms.CharField(required=False, widget=forms.HiddenInput)

    def ask_not_duplicate(self) -> None:
        """Possible duplicates are shown: offer the checkbox, unticked."""
        self.fields["confirm_not_duplicate"].widget = forms.CheckboxInput()
        data = self.data.copy()
        data.pop("confirm_not_duplicate", None)
        self.data = data


class AdmitForm(CheckedForm):
    """Department, then one of its wards, then one of that ward's free beds (offered by
    :func:`patients.pages.beds.offer`); the bed stays free text underneath, so a bed taken
    meanwhile is refused by the admission itself, with its reason."""

    department_id = forms.ChoiceField(label="Department")
    # Checked by the admission (a ward of another department is named in its refusal).
    ward_id = forms.CharField(label="Ward", widget=forms.Select,
                              help_text="The department's wards.")
    bed = forms.CharField(max_length=20, required=False, widget=forms.Select)
    attending = forms.ChoiceField(required=False, label="Attending clinician",
                                  help_text="Can be left for later.")
    reason = forms.CharField(max_length=500, widget=forms.Textarea(attrs={"rows": 3}))

    def __init__(self, *args: object, clinicians: list, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["attending"].choices = [("", "— later —"), *clinicians]


class DischargeForm(CheckedForm):
    """The discharge confirmation: disposition, note, and the orders the user saw listed for
    cancelling (``orders``: their ids, space-separated; ``confirm``: sent by the page's own
    button, so the chart's short form only opens the confirmation)."""

    # The chart's short form may be sent without a disposition: the confirmation asks for it.
    use_required_attribute = False
    disposition = forms.ChoiceField(
        choices=[("", "— choose —"), *DISPOSITION_LABELS.items()],
        error_messages={"required": "Choose a disposition.",
                        "invalid_choice": "Choose a disposition from the list."})
    note = forms.CharField(required=False, max_length=DISCHARGE_NOTE_MAX, label="Discharge note",
                           widget=forms.Textarea(attrs={"rows": 4, "cols": 60}))
    etag = forms.CharField(widget=forms.HiddenInput)
    orders = forms.CharField(required=False, widget=forms.HiddenInput)
    confirm = forms.CharField(required=False, widget=forms.HiddenInput)


class FindForm(CheckedForm):
    q = forms.CharField(max_length=100, label="MRN or family name")

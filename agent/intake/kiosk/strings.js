// Every word the kiosk shows, in one place: a venue translates this file and points the intake's
// kiosk.strings at its copy. {location} is replaced by the printer's location (from its config).
window.KIOSK_STRINGS = {
  lang: "en",
  title: "Badge pick-up",
  prompt: "Scan your ticket or type your code",
  code_label: "Ticket code",
  name_label: "Name on the badge",
  submit: "Print my badge",
  sending: "Sending…",
  queued: "Your badge is next in line…",
  printing: "Printing at {location}",
  ready: "Ready — collect it at {location}",
  already: "This badge was already printed — collect it at {location}",
  failed: "Something went wrong: please ask at the help desk.",
  invalid: "Please check: {detail}",
  busy: "Too many requests: please wait a moment.",
  no_token: "This kiosk is not set up yet (no token): ask staff.",
  cancelled: "This badge was cancelled: please ask at the help desk.",
  again: "Next attendee",
  somewhere: "the badge desk",
};

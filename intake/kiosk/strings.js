// Every word the kiosk shows, in one place: a venue translates this file and points the intake's
// kiosk.strings at its copy. {location} is replaced by the printer's location (from its config), {name} by the
// attendee's first name on the list, {time} by when their badge printed. A translation that lacks a newer key shows
// the English one (kiosk.js).
window.KIOSK_STRINGS = {
  lang: "en",
  title: "Badge pick-up",
  prompt: "Scan your ticket or type your code",
  prompt_scan: "Scan your ticket",
  code_label: "Ticket code",
  name_label: "Name on the badge",
  submit: "Print my badge",
  sending: "Sending…",
  queued: "Your badge is next in line…",
  queued_wait: "Your badge is in line: about {wait} min…",
  hello: "Hello {name}",
  printing: "Printing at {location}",
  ready: "Ready — collect it at {location}",
  already: "This badge was already printed — collect it at {location}",
  printed_before: "Your badge was printed at {time} — collect it at {location}",
  unknown: "We could not find this code. Please scan the code on your ticket, or go to the help desk.",
  no_printer: "No printer can print your badge right now. Please go to the help desk.",
  cancelled_ticket: "This ticket has been cancelled. Please go to the help desk.",
  see_desk: "Please go to the help desk: staff will print your badge there.",
  failed: "Something went wrong: please ask at the help desk.",
  invalid: "Please check: {detail}",
  busy: "Too many requests: please wait a moment.",
  no_token: "This kiosk is not set up yet (no token): ask staff.",
  cancelled: "This badge was cancelled: please ask at the help desk.",
  again: "Next attendee",
  somewhere: "the badge desk",
};

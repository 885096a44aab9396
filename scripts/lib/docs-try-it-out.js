// Run in the /docs page by scripts/docs-browser.sh (through devtools.py), after it defines KEY
// (the demo's API key) and USERNAME (a public sample user). Does what a person would: opens
// "Authorize", gives the bearer key, then "Try it out" → "Execute" on the short-video lookup.
// Returns what the page showed; the shell script judges it.
(async () => {
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const until = async (find, what, ms = 20000) => {
    const end = Date.now() + ms;
    for (;;) {
      const found = find();
      if (found) return found;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await sleep(50);
    }
  };
  // React keeps its own copy of an input's value: set it the way a keystroke would.
  const type = (input, value) => {
    const setter = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(input), "value").set;
    setter.call(input, value);
    input.dispatchEvent(new Event("input", { bubbles: true }));
    input.dispatchEvent(new Event("change", { bubbles: true }));
  };
  const seen = {};

  await until(() => document.querySelectorAll(".opblock").length >= 2, "the operations");

  document.querySelector(".auth-wrapper .btn.authorize").click();
  const dialog = await until(() => document.querySelector(".modal-ux"), "the Authorize dialog");
  seen.authorizeDialog = dialog.innerText;
  const keyInput = await until(() => dialog.querySelector("input"), "the key field");
  type(keyInput, KEY);
  dialog.querySelector("button.authorize").click();
  await until(
    () => dialog.querySelector('button[aria-label="Remove authorization"]'),
    "the key being accepted (a Logout button)"
  );
  dialog.querySelector("button.btn-done").click();
  await until(() => !document.querySelector(".modal-ux"), "the dialog to close");
  seen.authorizeButton = document.querySelector(".auth-wrapper .btn.authorize").className;

  const op = document.getElementById("operations-profiles-short_video_profile");
  op.querySelector(".opblock-summary-control").click();
  (await until(() => op.querySelector(".try-out__btn"), "Try it out")).click();
  const nameInput = await until(() => op.querySelector(".parameters input"), "the username field");
  type(nameInput, USERNAME);
  (await until(() => op.querySelector(".btn.execute"), "Execute")).click();
  const status = await until(
    () => op.querySelector(".live-responses-table .response .response-col_status"),
    "the response of Try it out"
  );
  seen.status = status.innerText.trim();
  seen.requestUrl = (op.querySelector(".request-url pre") || {}).innerText || "";
  seen.curl = (op.querySelector(".curl-command") || {}).innerText || "";
  seen.body = (op.querySelector(".live-responses-table .response-col_description pre") || {}).innerText || "";
  return seen;
})()

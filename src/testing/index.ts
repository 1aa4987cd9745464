/** webhook-tasks/testing: sign requests as senders do, and run an app's tasks in a test. */
export { signRequest, SIGN_PRESETS, type SignPreset, type SignInit, type HmacSignOptions } from "./sign-request";
export { testApp, type TestApp, type TestAppOptions, type TestRun, type TestDelivery, type SendInit } from "./test-app";

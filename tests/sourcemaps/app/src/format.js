// Formatting helpers of the shop (the line that throws is in formatPrice).
export const buildLabel = BUILD_LABEL;

export function formatPrice(cents) {
  if (typeof cents !== "number") {
    throw new TypeError(`price must be a number, got ${typeof cents}`);
  }
  return (cents / 100).toFixed(2);
}

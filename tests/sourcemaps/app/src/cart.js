import { formatPrice } from "./format.js";

export class Cart {
  constructor() {
    this.items = [];
  }

  add(name, cents) {
    this.items.push({ name, cents });
  }

  total() {
    // The bug: the initial value is a string, so the sum is a string too.
    const sum = this.items.reduce((acc, item) => acc + item.cents, "0");
    return formatPrice(sum);
  }
}

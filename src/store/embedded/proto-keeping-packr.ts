import { Packr, type Options, type UnpackOptions } from "msgpackr";
import { unpackKeepingProto } from "../payload-codec";

/**
 * msgpackr as lmdb uses it for the message databases (lmdb builds it with its own options:
 * copied buffers, buffer reuse when writing), but reading a `__proto__` key back as the own
 * key it was, as every other engine does, instead of msgpackr's `__proto_`: a message read from
 * the B-tree (after a restart, a retry, a dead letter) holds the keys it was written with.
 */
export class ProtoKeepingPackr extends Packr {
  private readonly maps: Packr;

  constructor(options?: Options) {
    super(options);
    this.maps = new Packr({ ...options, mapsAsObjects: false });
  }

  override unpack(bytes: Buffer | Uint8Array, options?: UnpackOptions): unknown {
    // lmdb hands a view of its whole read buffer and the value's end: only the value is looked at.
    const end = typeof options === "number" ? options : bytes.length;
    return unpackKeepingProto(bytes.subarray(0, end), () => super.unpack(bytes, options), this.maps);
  }

  override decode(bytes: Buffer | Uint8Array, options?: UnpackOptions): unknown {
    return this.unpack(bytes, options);
  }
}

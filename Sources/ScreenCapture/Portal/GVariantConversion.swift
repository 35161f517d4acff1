internal import CGIO

/// Conversion between `PortalValue` and GVariant. Functions here take and return GVariant
/// pointers and must run where the caller owns them (the GLib loop thread, for the portal).
enum GVariantConversion {
    /// A new floating GVariant for `value` (consumed by the GDBus call it is passed to).
    static func make(_ value: PortalValue) -> OpaquePointer {
        switch value {
        case .bool(let b): return g_variant_new_boolean(b ? 1 : 0)
        case .byte(let v): return g_variant_new_byte(v)
        case .int32(let v): return g_variant_new_int32(v)
        case .uint32(let v): return g_variant_new_uint32(v)
        case .int64(let v): return g_variant_new_int64(gint64(v))
        case .uint64(let v): return g_variant_new_uint64(guint64(v))
        case .double(let v): return g_variant_new_double(v)
        case .string(let s): return g_variant_new_string(s)
        case .objectPath(let s): return g_variant_new_object_path(s)
        case .handle(let v): return g_variant_new_handle(v)
        case .other(let s): return g_variant_new_string(s)  // never sent; read-only by design
        case .tuple(let items):
            var children = items.map { Optional(make($0)) }
            return children.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, gsize($0.count)) }
        case .array(let items):
            // Only arrays of one basic type are built here; an empty one is taken as `as`.
            var children = items.map { Optional(make($0)) }
            let type = items.isEmpty ? g_variant_type_new("s") : nil
            defer { if let type { g_variant_type_free(type) } }
            return children.withUnsafeMutableBufferPointer {
                g_variant_new_array(type, $0.baseAddress, gsize($0.count))
            }
        case .dictionary(let entries):
            let type = g_variant_type_new("a{sv}")
            defer { g_variant_type_free(type) }
            let builder = g_variant_builder_new(type)
            for (key, entry) in entries.sorted(by: { $0.key < $1.key }) {
                g_variant_builder_add_value(
                    builder, g_variant_new_dict_entry(g_variant_new_string(key), g_variant_new_variant(make(entry))))
            }
            let built = g_variant_builder_end(builder)!
            g_variant_builder_unref(builder)
            return built
        }
    }

    /// `value` through a GVariant and back, as the bus would carry it (for tests of the conversion).
    static func roundTrip(_ value: PortalValue) -> PortalValue {
        let variant = g_variant_ref_sink(make(value))!
        defer { g_variant_unref(variant) }
        return read(variant)
    }

    /// The GVariant type string `value` is sent as.
    static func typeString(_ value: PortalValue) -> String {
        let variant = g_variant_ref_sink(make(value))!
        defer { g_variant_unref(variant) }
        return String(cString: g_variant_get_type_string(variant))
    }

    /// Reads a GVariant (not consumed) into a `PortalValue`.
    static func read(_ variant: OpaquePointer) -> PortalValue {
        let type = String(cString: g_variant_get_type_string(variant))
        switch type.first {
        case "b": return .bool(g_variant_get_boolean(variant) != 0)
        case "y": return .byte(g_variant_get_byte(variant))
        case "i": return .int32(g_variant_get_int32(variant))
        case "u": return .uint32(g_variant_get_uint32(variant))
        case "x": return .int64(Int64(g_variant_get_int64(variant)))
        case "t": return .uint64(UInt64(g_variant_get_uint64(variant)))
        case "d": return .double(g_variant_get_double(variant))
        case "h": return .handle(g_variant_get_handle(variant))
        case "s": return .string(String(cString: g_variant_get_string(variant, nil)))
        case "o": return .objectPath(String(cString: g_variant_get_string(variant, nil)))
        case "v":
            let inner = g_variant_get_variant(variant)!
            defer { g_variant_unref(inner) }
            return read(inner)
        case "a" where type.hasPrefix("a{s"):
            var entries: [String: PortalValue] = [:]
            for index in 0..<g_variant_n_children(variant) {
                let entry = g_variant_get_child_value(variant, index)!
                defer { g_variant_unref(entry) }
                let key = g_variant_get_child_value(entry, 0)!
                let value = g_variant_get_child_value(entry, 1)!
                defer { g_variant_unref(key); g_variant_unref(value) }
                if case .string(let name) = read(key) { entries[name] = read(value) }
            }
            return .dictionary(entries)
        case "a", "(":
            var items: [PortalValue] = []
            for index in 0..<g_variant_n_children(variant) {
                let child = g_variant_get_child_value(variant, index)!
                defer { g_variant_unref(child) }
                items.append(read(child))
            }
            return type.first == "a" ? .array(items) : .tuple(items)
        default:
            return .other(type)
        }
    }
}

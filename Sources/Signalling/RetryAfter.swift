// RFC 9110 §10.2.3 Retry-After = HTTP-date / delay-seconds
//
//   Retry-After: 120
//   Retry-After: Fri, 31 Dec 1999 23:59:59 GMT      IMF-fixdate (§5.6.7)
//   Retry-After: Friday, 31-Dec-99 23:59:59 GMT     obsolete RFC 850 form (recipients must accept)
//   Retry-After: Fri Dec 31 23:59:59 1999           obsolete asctime form (recipients must accept)
import Foundation

enum RetryAfter {
    /// How long to wait, never negative; nil when the value is neither form. `now` is the wall
    /// clock the caller reads (a date in the past means "now").
    static func delay(_ value: String, now: Date) -> Duration? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) }) {
            // A delay too large for Int is still a delay: the caller bounds it anyway.
            return .seconds(Int(text) ?? Int.max / 1_000_000_000_000)
        }
        guard let date = httpDate(text) else { return nil }
        let seconds = date - now.timeIntervalSince1970
        return seconds <= 0 ? .zero : .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }

    /// Seconds since 1970 of an HTTP-date in any of its three forms, GMT.
    static func httpDate(_ text: String) -> Double? {
        let words = text.split(separator: " ").map(String.init)
        var day: Int?, monthName: String?, year: Int?, time: String?
        switch words.count {
        case 6 where words[0].hasSuffix(",") && words[5] == "GMT":  // Sun, 06 Nov 1994 08:49:37 GMT
            (day, monthName, year, time) = (Int(words[1]), words[2], Int(words[3]), words[4])
            guard words[3].count == 4 else { return nil }
        case 4 where words[0].hasSuffix(",") && words[3] == "GMT":  // Sunday, 06-Nov-94 08:49:37 GMT
            let parts = words[1].split(separator: "-").map(String.init)
            guard parts.count == 3, parts[2].count == 2, let yy = Int(parts[2]) else { return nil }
            // RFC 9110 §5.6.7: a two-digit year more than 50 years ahead is in the past century.
            (day, monthName, year, time) = (Int(parts[0]), parts[1], yy < 70 ? 2000 + yy : 1900 + yy, words[2])
        case 5:  // Sun Nov  6 08:49:37 1994
            guard words[4].count == 4 else { return nil }
            (day, monthName, year, time) = (Int(words[2]), words[1], Int(words[4]), words[3])
        default:
            return nil
        }
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard let day, let year, let time, let monthName, let monthIndex = months.firstIndex(of: monthName),
            (1...31).contains(day)
        else { return nil }
        let clock = time.split(separator: ":").compactMap { Int($0) }
        guard clock.count == 3, (0...23).contains(clock[0]), (0...59).contains(clock[1]), (0...60).contains(clock[2])
        else { return nil }
        let days = daysSinceEpoch(year: year, month: monthIndex + 1, day: day)
        return Double(days * 86_400 + clock[0] * 3600 + clock[1] * 60 + clock[2])
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (the civil-from-days algorithm, inverted).
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

#pragma once
// Text for numbers the views show: byte sizes in binary units (as memory_summary() does) and
// device addresses in hex.
#include <QFontMetrics>
#include <QString>
#include <QtGlobal>

namespace allocscope::views {

struct Formatting {
    // "0 B", "512 B", "1.50 KiB", "20.0 MiB", "1.25 GiB" (three significant digits).
    static QString bytes(qint64 bytes);
    static QString bytes(quint64 bytes) { return Formatting::bytes(static_cast<qint64>(bytes)); }
    // "0x7f3a2c000000".
    static QString address(quint64 address);
    // "12,345" (thousands grouped, locale independent so screenshots and tests agree).
    static QString count(qint64 value);
    // "1 run", "3 runs", "12,345 ops": a count with its noun in the right number. (Qt's %n
    // plurals need a translation file to say anything but "run(s)"; the app ships none.)
    static QString counted(qint64 value, const QString& one, const QString& many);
    // "42.0 %" of share in 0..1.
    static QString percent(double share);
    // Pixels that any 12-digit device address ("0x" + 12 hex digits) needs in `metrics`: hex
    // digits differ in width in proportional fonts, so "0x7fffffffffff" is not the widest.
    static int addressWidth(const QFontMetrics& metrics);
};

}  // namespace allocscope::views

#include "views/util/Formatting.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace allocscope::views {

QString Formatting::bytes(qint64 value) {
    const bool negative = value < 0;
    const double magnitude = std::fabs(static_cast<double>(value));
    static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int unit = 0;
    double scaled = magnitude;
    while (scaled >= 1024.0 && unit < 5) {
        scaled /= 1024.0;
        ++unit;
    }
    QString number;
    if (unit == 0) {
        number = QString::number(static_cast<qint64>(magnitude));
    } else {
        const int decimals = scaled >= 100.0 ? 0 : (scaled >= 10.0 ? 1 : 2);
        number = QString::number(scaled, 'f', decimals);
    }
    return (negative ? QStringLiteral("-") : QString()) + number + QLatin1Char(' ') + QLatin1String(kUnits[unit]);
}

QString Formatting::address(quint64 value) {
    return QStringLiteral("0x") + QString::number(value, 16);
}

QString Formatting::counted(qint64 value, const QString& one, const QString& many) {
    return count(value) + QLatin1Char(' ') + (value == 1 ? one : many);
}

QString Formatting::count(qint64 value) {
    const QString digits = QString::number(value < 0 ? -value : value);
    QString grouped;
    for (int i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) grouped += QLatin1Char(',');
        grouped += digits[i];
    }
    return value < 0 ? QStringLiteral("-") + grouped : grouped;
}

int Formatting::addressWidth(const QFontMetrics& metrics) {
    int widest = 0;
    for (const char c : QByteArrayLiteral("0123456789abcdef")) widest = std::max(widest, metrics.horizontalAdvance(QLatin1Char(c)));
    return metrics.horizontalAdvance(QStringLiteral("0x")) + 12 * widest + 1;
}

QString Formatting::percent(double share) {
    return QString::number(share * 100.0, 'f', 1) + QStringLiteral(" %");
}

}  // namespace allocscope::views

#pragma once
// Helpers shared by the formats test suites: where the test data is and how to load bytes.
#include <QByteArray>
#include <QFile>
#include <QString>
#include <QTest>
#include <string>

namespace formats_test {

inline QString dataDir() {
    const QByteArray env = qgetenv("ALLOCSCOPE_TEST_DATA");
    return env.isEmpty() ? QStringLiteral(ALLOCSCOPE_TEST_DATA) : QString::fromLocal8Bit(env);
}

inline std::string dataPath(const QString& relative) { return (dataDir() + "/" + relative).toStdString(); }

inline std::string bytes(const QString& relative) {
    QFile file(dataDir() + "/" + relative);
    if (!file.open(QIODevice::ReadOnly)) qFatal("cannot open test data %s", qPrintable(file.fileName()));
    const QByteArray data = file.readAll();
    return std::string(data.constData(), static_cast<size_t>(data.size()));
}

// Builds a byte string from a literal that may contain NULs: bin("\x80\x04}.").
template <size_t N>
std::string bin(const char (&literal)[N]) {
    return std::string(literal, N - 1);
}

}  // namespace formats_test

#pragma once
// A LessonNavigator that only writes down what it was asked, for the lesson controller's tests.
#include <QStringList>

#include "app/gui/LessonNavigator.h"

class FakeNavigator : public allocscope::app::LessonNavigator {
public:
    bool openSessionFile(const QString& path) override {
        calls << "open " + path;
        openedPath = path;
        return true;
    }
    void selectRun(int number) override {
        calls << QStringLiteral("run %1").arg(number);
        run = number;
    }
    void goToEvent(qint64 seq) override {
        calls << QStringLiteral("event %1").arg(seq);
        event = seq;
    }
    void showView(const QString& name) override {
        calls << "view " + name;
        view = name;
    }
    void selectBlock(quint64 address) override {
        calls << QStringLiteral("block %1").arg(address);
        block = address;
    }
    void showComparison(const QList<int>& runs) override {
        calls << QStringLiteral("compare %1").arg(runs.size());
        compared = runs;
    }

    QStringList calls;
    QString openedPath;
    int run = 0;
    qint64 event = -1;
    QString view;
    quint64 block = 0;
    QList<int> compared;
};

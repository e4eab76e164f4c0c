#pragma once
// Message boxes are modal: a test that makes the window show one answers it with this, and
// checks what it said.
#include <QApplication>
#include <QMessageBox>
#include <QStringList>
#include <QTimer>

namespace testing {

class MessageBoxCatcher {
public:
    QStringList texts;  // every box's text, in the order they appeared
    MessageBoxCatcher() {
        timer_.setInterval(20);
        QObject::connect(&timer_, &QTimer::timeout, [this] {
            for (QWidget* w : QApplication::topLevelWidgets()) {
                auto* box = qobject_cast<QMessageBox*>(w);
                if (box && box->isVisible()) {
                    texts << box->text();
                    box->done(QMessageBox::Ok);
                }
            }
        });
        timer_.start();
    }

private:
    QTimer timer_;
};

}  // namespace testing

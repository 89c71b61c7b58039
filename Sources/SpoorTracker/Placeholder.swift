internal import SpoorCore
